from shootout.judge.analysis import confounders


def facts(openssl: str, elf_class: int, sha: str = "abc") -> dict:
    return {"target": {"openssl": openssl, "distro": "Debian 12"},
            "workloads": {"w": {"version": "1.0", "input_sha256": sha,
                                "elf": {"openssl": {"elf_class": elf_class, "machine": "x86"}}}}}


def test_versions_and_inputs_that_differ_are_confounders_the_abi_is_not():
    assert confounders(facts("3.0.15", 64), facts("3.0.15", 32), "w") == []
    found = confounders(facts("3.0.15", 64), facts("3.0.14", 32, sha="def"), "w")
    assert found == ["openssl: 3.0.15 vs 3.0.14", "input_sha256: abc vs def"]


def with_versions(flac: str) -> dict:
    return {"target": {"distro": "Debian 12"},
            "workloads": {"flac": {"input_sha256": "abc", "versions": {"flac": flac, "cmp": "3.8"}}}}


def test_every_declared_tool_version_that_differs_is_a_confounder_whatever_its_name():
    found = confounders(with_versions("flac 1.4.2"), with_versions("flac 1.4.3"), "flac")
    assert found == ["versions.flac: flac 1.4.2 vs flac 1.4.3"]
    assert confounders(with_versions("flac 1.4.2"), with_versions("flac 1.4.2"), "flac") == []


def membw_facts(copy: str, fill: str) -> dict:
    return {"target": {}, "workloads": {"membw": {"code_paths": {"copy_mbps": copy, "fill_mbps": fill}}}}


def test_a_code_path_is_a_confounder_of_its_own_metric_only():
    cached, bypass = "memcpy of 256 MiB through the cache", "memcpy of 256 MiB bypasses the cache (non-temporal stores)"
    a, b = membw_facts(cached, "memset through the cache"), membw_facts(bypass, "memset through the cache")
    assert confounders(a, b, "membw", "copy_mbps") == [f"code_path: {cached} vs {bypass}"]
    assert confounders(a, b, "membw", "fill_mbps") == []
    assert confounders(a, b, "membw", "writeread_mbps") == []  # the headline does not call memcpy


def test_a_version_that_differs_only_by_the_abi_being_compared_is_not_a_confounder():
    """rpi64 flagged lame: 'LAME 64bits version 3.100 vs LAME 32bits version 3.100'."""
    lame = lambda v: {"target": {}, "workloads": {"lame": {"versions": {"lame": v}}}}  # noqa: E731
    assert confounders(lame("LAME 64bits version 3.100 (http://lame.sf.net)"),
                       lame("LAME 32bits version 3.100 (http://lame.sf.net)"), "lame") == []
    assert confounders(lame("7-Zip 22.01 (x64)"), lame("7-Zip 22.01 (x86)"), "lame") == []
    assert confounders(lame("zstd v1.5.4, 64-bits"), lame("zstd v1.5.4, 32-bits"), "lame") == []
    assert confounders(lame("node v18.19.0 arm64"), lame("node v18.19.0 armv7l"), "lame") == []
    # the version number itself still counts, whatever words surround it
    assert confounders(lame("LAME 64bits version 3.100"), lame("LAME 32bits version 3.99.5"), "lame") == [
        "versions.lame: LAME 64bits version 3.100 vs LAME 32bits version 3.99.5"]
