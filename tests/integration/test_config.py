"""mcpd.conf (issue 26 item 4): every long option is a "name = value" line
of $XDG_CONFIG_HOME/mcpd/mcpd.conf, read at every start however mcpd was
started; the environment overrides the file and the command line both;
mcpctl status says each setting's value and where it came from."""
import os
import subprocess
import urllib.error
import urllib.request

from conftest import MCPCTL, MCPD, child_env, free_port, poll, run_ctl


def write_conf(config_home, text):
    path = config_home / "mcpd" / "mcpd.conf"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


def options(d):
    return {o["name"]: (o["value"], o["source"])
            for o in d.rpc.result("mcpd/status")["options"]}


def test_file_then_environment_then_command_line(tmp_path, mcpd_factory):
    home = tmp_path / "config"
    conf = write_conf(home, "# mine\n\nmax-clients = 12\n"
                      "  call-timeout=5000  \n"
                      'docker = "/opt/my docker"\n'
                      "registry-allow-local = yes\n"
                      "max-servers = 7\n"
                      "audit = off\n")
    d = mcpd_factory("--max-servers", "9", env={
        "XDG_CONFIG_HOME": str(home), "MCPD_DOCKER": "/usr/bin/docker"})
    st = d.rpc.result("mcpd/status")
    assert st["config"] == str(conf)
    o = options(d)
    assert o["max-clients"] == (12, f"{conf}:3")
    assert o["call-timeout"] == (5000, f"{conf}:4")
    assert o["registry-allow-local"] == (True, f"{conf}:6")
    assert o["docker"] == ("/usr/bin/docker", "environment MCPD_DOCKER")
    assert o["max-servers"] == (9, "command line")
    assert o["log-lines"] == (1000, "default")
    assert o["audit"] == ("off", f"{conf}:8")
    assert st["audit"]["on"] is False
    assert o["socket"] == (str(d.sock), "command line")
    assert st["limits"]["max_clients"] == 12
    # The human form: what is not at its default, and how many are.
    r = d.ctl("status", is_json=False)
    assert r.rc == 0, r
    lines = r.out.splitlines()
    start = lines.index(f"settings (file {conf}):")
    shown = lines[start + 1:]
    assert f"  max-clients = 12 ({conf}:3)" in shown
    assert "  max-servers = 9 (command line)" in shown
    assert "  docker = /usr/bin/docker (environment MCPD_DOCKER)" in shown
    n = len(st["options"]) - sum(1 for v in o.values() if v[1] != "default")
    assert shown[-1] == f"  {n} more at their defaults (mcpctl status --all)"
    r = d.ctl("status", "--all", is_json=False)
    assert "  log-lines = 1000 (default)" in r.out.splitlines()


def test_no_file_is_no_setting(tmp_path, mcpd_factory):
    d = mcpd_factory(env={"XDG_CONFIG_HOME": str(tmp_path / "none")})
    st = d.rpc.result("mcpd/status")
    assert st["config"] is None
    assert all(o["source"] in ("default", "command line")
               for o in st["options"]), st["options"]
    r = d.ctl("status", is_json=False)
    assert "settings (no settings file):" in r.out.splitlines()


def refused(home, *args):
    p = subprocess.run([str(MCPD), "-d", "-s", str(home / "s.sock"), "-S",
                        str(home / "state"), *args],
                       env=child_env({"XDG_CONFIG_HOME": str(home)}),
                       stdin=subprocess.DEVNULL, capture_output=True,
                       text=True, timeout=30)
    assert not (home / "s.sock").exists()
    return p.returncode, p.stdout, p.stderr


def test_a_bad_file_is_an_error_naming_its_line(tmp_path):
    home = tmp_path / "config"
    conf = write_conf(home, "max-clients = 3\nmax-clientz = 3\n")
    assert refused(home) == (
        2, "", f'mcpd: {conf}:2: unknown setting "max-clientz"; did you '
        f"mean max-clients? (the settings are mcpd's long options without "
        f"--: see mcpd(8))\n")
    write_conf(home, "# a comment\nmax-clients 3\n")
    assert refused(home) == (
        2, "", f'mcpd: {conf}:2: not a setting: a line is "name = value" '
        f"(or a # comment)\n")
    write_conf(home, "log-lines = 0\n")
    assert refused(home) == (
        2, "", f'mcpd: {conf}:1: log-lines wants a number from 1 to '
        f'1000000, not "0"\n')
    write_conf(home, "registry-allow-local = maybe\n")
    assert refused(home) == (
        2, "", f"mcpd: {conf}:1: registry-allow-local wants true or false "
        f'(yes/no, 1/0), not "maybe"\n')
    write_conf(home, b"max-clients = 3\n\0\n")
    assert refused(home) == (
        2, "", f"mcpd: {conf}: a NUL byte: not a settings file\n")
    # The command line still says it its own way.
    write_conf(home, "")
    assert refused(home, "--log-lines", "0") == (
        2, "", 'mcpd: --log-lines wants a number from 1 to 1000000, not '
        '"0"\n')


def test_config_option_names_another_file(tmp_path, mcpd_factory):
    home = tmp_path / "config"
    write_conf(home, "max-clients = 12\n")
    other = tmp_path / "other.conf"
    other.write_text("max-clients = 13\n")
    d = mcpd_factory("--config", str(other),
                     env={"XDG_CONFIG_HOME": str(home)})
    assert options(d)["max-clients"] == (13, f"{other}:1")
    assert refused(home, "--config", str(tmp_path / "nope.conf")) == (
        2, "", f"mcpd: cannot read the settings file "
        f"{tmp_path / 'nope.conf'}: No such file or directory\n")


def http_status(url):
    try:
        with urllib.request.urlopen(urllib.request.Request(
                url, data=b"{}", method="POST"), timeout=10) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


def test_an_autostarted_mcpd_listens_where_the_file_says(tmp_path):
    """mcpctl starts mcpd itself when none answers: that daemon reads
    mcpd.conf too, so HTTP clients find it after a restart."""
    home = tmp_path / "config"
    port = free_port()
    write_conf(home, f"listen-http = 127.0.0.1:{port}\n")
    run = tmp_path / "run"
    run.mkdir(mode=0o700)
    env = child_env({"XDG_CONFIG_HOME": str(home),
                     "XDG_RUNTIME_DIR": str(run),
                     "XDG_STATE_HOME": str(tmp_path / "state")})
    env.pop("MCPD_NO_AUTOSTART")
    sock = run / "mcpd" / "mcpd.sock"
    try:
        r = run_ctl(sock, "status", env=env)
        assert r.rc == 0, r
        assert r.json["http"] == f"http://127.0.0.1:{port}/mcp"
        opts = {o["name"]: o for o in r.json["options"]}
        assert opts["listen-http"]["source"] == \
            f"{home}/mcpd/mcpd.conf:1"
        # No token: refused, by mcpd's front.
        assert http_status(f"http://127.0.0.1:{port}/mcp") == 401
    finally:
        pid = None
        r = run_ctl(sock, "status", env=env)
        if r.rc == 0:
            pid = r.json["pid"]
            run_ctl(sock, "shutdown", env=env)
        if pid is not None:
            poll(lambda: not os.path.exists(f"/proc/{pid}"), timeout=30,
                 what="the autostarted mcpd to stop")
