"""``kubeprio serve`` refuses bad input before it starts anything (exit status 2)."""

from __future__ import annotations

import pytest

from kubeprio.cli import main

POD = """\
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers: [{name: c, image: nginx}]
"""


def test_a_nodes_file_with_something_else_than_nodes(tmp_path, capsys):
    path = tmp_path / "nodes.yaml"
    path.write_text(POD)
    assert main(["serve", "--data-dir", str(tmp_path / "d"), "--nodes-file", str(path)]) == 2
    assert capsys.readouterr().err == (
        f"error: {path} (document 1): --nodes-file takes Nodes, not Pod\n"
    )
    assert not (tmp_path / "d").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--nodes-file", "/nonexistent/nodes.yaml"], "/nonexistent/nodes.yaml"),
        (["--node-cpu", "four"], "quantities must match the regular expression"),
        (["--nodes", "-1"], "--nodes must not be negative"),
        (["--event-ttl", "an hour"], 'time: invalid duration "an hour"'),
        (["--event-ttl", "0"], "--event-ttl must be positive, not 0"),
    ],
    ids=["missing-file", "bad-quantity", "negative-nodes", "bad-ttl", "zero-ttl"],
)
def test_bad_options(tmp_path, capsys, args, message):
    assert main(["serve", "--data-dir", str(tmp_path / "d"), *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ")
    assert message in err


def test_an_unknown_preset_is_an_argparse_error(tmp_path):
    with pytest.raises(SystemExit) as caught:
        main(["serve", "--preset", "nosuch"])
    assert caught.value.code == 2
