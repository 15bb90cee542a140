from shootout.analysis import confounders


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
