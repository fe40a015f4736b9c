"""Which hosts a webhook action may post to: the one rule the loader and the sender share."""
from __future__ import annotations

import pytest

from flows.egress import literal_address, refused_host, refused_url


@pytest.mark.parametrize("host, words", [
    ("127.0.0.1", "loopback"), ("127.1", "loopback"), ("0x7f000001", "loopback"), ("2130706433", "loopback"),
    ("0177.0.0.1", "loopback"), ("[::1]", "loopback"), ("::ffff:127.0.0.1", "loopback"),
    ("169.254.169.254", "metadata"), ("[fd00:ec2::254]", "metadata"), ("100.100.100.200", "metadata"),
    ("0.0.0.0", "unspecified"), ("[::]", "unspecified"), ("10.0.0.1", "private"), ("172.16.5.4", "private"),
    ("192.168.1.1", "private"), ("[fc00::1]", "private"), ("100.64.0.1", "private"), ("169.254.1.1", "link-local"),
    ("[fe80::1%eth0]", "link-local"), ("224.0.0.251", "multicast"), ("[ff02::1]", "multicast"),
    ("localhost", "this machine"), ("LocalHost.", "this machine"), ("api.localhost", "this machine"),
    ("metadata.google.internal", "metadata"),
])
def test_local_private_and_metadata_hosts_are_refused_with_a_reason(host: str, words: str) -> None:
    why = refused_host(host)
    assert why is not None and words in why


@pytest.mark.parametrize("host", ["crm.example", "8.8.8.8", "[2001:4860:4860::8888]", "1.1.1.1", "127.0.0.1.example"])
def test_public_hosts_and_names_pass(host: str) -> None:
    assert refused_host(host) is None


def test_allowed_hosts_and_networks_pass_and_nothing_else_does() -> None:
    allow = ["10.0.0.0/8", "crm.internal", "::1", " 192.168.7.7 "]
    assert refused_host("10.20.30.40", allow) is None
    assert refused_host("CRM.internal", allow) is None
    assert refused_host("[::1]", allow) is None
    assert refused_host("192.168.7.7", allow) is None
    assert refused_host("192.168.7.8", allow) is not None
    assert refused_host("127.0.0.1", allow) is not None
    assert refused_host("10.0.0.1", ["not a network", ""]) is not None


def test_urls_are_judged_by_their_host() -> None:
    assert refused_url("http://user:pw@127.0.0.1:8080/x") is not None
    assert refused_url("https://crm.example/leads?x=127.0.0.1") is None
    assert refused_url("http://[::1") is not None  # an unreadable host is refused, not a crash
    assert refused_host("") is not None and refused_host(None) is not None


def test_legacy_forms_read_the_way_inet_aton_reads_them() -> None:
    assert str(literal_address("127.1")) == "127.0.0.1"
    assert str(literal_address("10.1.256")) == "10.1.1.0"
    assert str(literal_address("0x0a.0.0.1")) == "10.0.0.1"
    assert literal_address("256.1.1.1") is None and literal_address("crm.example") is None
    assert literal_address("1.2.3.4.5") is None
