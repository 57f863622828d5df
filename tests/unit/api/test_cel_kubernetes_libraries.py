"""Kubernetes' CEL quantity, URL, IP, CIDR and sets libraries (``api.celextension``).

Each table cites the upstream file whose behaviour it checks (v1.32,
``k8s.io/apiserver/pkg/cel/library/``: ``quantity.go``, ``urls.go``, ``ip.go``,
``cidr.go``, ``lists.go``; cel-go's ``ext/sets.go``). Many rows are the cases of the
upstream ``*_test.go`` files; error texts are upstream's, word for word.
"""

from __future__ import annotations

import pytest

from kubeprio.api.celexpr import CompileError, ResultType, compile_expression, evaluate


def run(expression: str) -> tuple[object, str | None]:
    compiled = compile_expression(expression, ResultType.ANY, with_params=False)
    outcome = evaluate(compiled, {"object": {"spec": {"cpu": "500m", "ip": "10.0.0.7"}}})
    return outcome.value, outcome.error


def assert_value(expression: str, value: object) -> None:
    found, error = run(expression)
    assert error is None, error
    assert found == value


# quantity.go (cases from quantity_test.go)
@pytest.mark.parametrize(
    ("expression", "value"),
    [
        ('isQuantity("20")', True),
        ('isQuantity("20Mi")', True),
        ('isQuantity("20Mo")', False),
        ('isQuantity("10Mm")', False),
        ('quantity("200M") == quantity("0.2G") && quantity("0.2G") == quantity("200M")', True),
        ('quantity("1Ki") == quantity("1024")', True),
        ('quantity("200M") == quantity("0.3G")', False),
        ('quantity("50M").isLessThan(quantity("50Mi"))', True),
        ('quantity("100M").isLessThan(quantity("50M"))', False),
        ('quantity("50Mi").isGreaterThan(quantity("50M"))', True),
        ('quantity("200M").compareTo(quantity("0.2G"))', 0),
        ('quantity("50M").compareTo(quantity("50Mi"))', -1),
        ('quantity("50Mi").compareTo(quantity("50M"))', 1),
        ('quantity("50k").add(quantity("20")) == quantity("50.02k")', True),
        ('quantity("50k").add(20).isLessThan(quantity("50020"))', False),
        ('quantity("50k").sub(quantity("20")) == quantity("49.98k")', True),
        ('quantity("50k").sub(20) == quantity("49980")', True),
        ('quantity("50k").add(20).sub(quantity("100k")).asInteger()', -49980),
        ('quantity("50k").add(20).sub(quantity("100k")).sub(-50000).asInteger()', 20),
        ('quantity("50k").asInteger()', 50000),
        ('quantity("9999999999999999999999999999999999999G").isInteger()', False),
        ('quantity("50").isInteger()', True),
        ('quantity("50.5").isInteger()', False),
        ('quantity("50.703k").asApproximateFloat()', 50703.0),
        ('sign(quantity("-1m"))', -1),
        ('sign(quantity("0"))', 0),
        ("quantity(object.spec.cpu).isLessThan(quantity('1'))", True),
        ('type(quantity("1")) == kubernetes.Quantity', True),
    ],
)
def test_quantity(expression: str, value: object) -> None:
    assert_value(expression, value)


@pytest.mark.parametrize(
    ("expression", "error"),
    [
        (
            'quantity("10Mo")',
            "quantities must match the regular expression "
            "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
        ),
        ('quantity("10Mm")', "unable to parse quantity's suffix"),
        (
            'quantity("9999999999999999999999999999999999999G").asInteger()',
            "cannot convert value to integer",
        ),
        ('quantity("1.5").asInteger()', "cannot convert value to integer"),
    ],
)
def test_quantity_errors(expression: str, error: str) -> None:
    assert run(expression)[1] == error


def test_quantity_sign_is_a_function_not_a_method() -> None:
    """quantity.go declares ``sign`` with ``cel.Overload``, not ``cel.MemberOverload``."""
    with pytest.raises(CompileError, match="undeclared reference to 'sign'"):
        compile_expression('quantity("1").sign() == 1', ResultType.BOOL, with_params=False)


# urls.go (cases from the library's documentation and Go's net/url)
@pytest.mark.parametrize(
    ("expression", "value"),
    [
        ("isURL('https://example.com/path')", True),
        ("isURL('/absolute-path')", True),
        ("isURL('relative/path')", False),
        ("isURL('https://a b/')", False),
        ("url('https://example.com/path').getScheme()", "https"),
        ("url('HTTPS://example.com').getScheme()", "https"),
        ("url('https://example.com:80/').getHost()", "example.com:80"),
        ("url('https://[::1]:80/').getHost()", "[::1]:80"),
        ("url('https://[::1]:80/').getHostname()", "::1"),
        ("url('https://example.com:80/').getPort()", "80"),
        ("url('https://example.com/').getPort()", ""),
        ("url('/absolute-path').getHost()", ""),
        ("url('https://example.com/with space/').getEscapedPath()", "/with%20space/"),
        ("url('https://example.com/a%2Fb').getEscapedPath()", "/a%2Fb"),
        (
            "url('https://example.com/?k=a&k=b&other=%20x+y&semi=1;2').getQuery()",
            {"k": ["a", "b"], "other": [" x y"]},
        ),
        ("url('https://example.com/path#frag').getEscapedPath()", "/path"),
        ("url('https://example.com') == url('https://example.com')", True),
        ("type(url('https://example.com')) == kubernetes.URL", True),
    ],
)
def test_url(expression: str, value: object) -> None:
    assert_value(expression, value)


@pytest.mark.parametrize(
    ("expression", "error"),
    [
        (
            "url('relative')",
            'URL parse error during conversion from string: parse "relative": invalid URI for request',
        ),
        (
            "url('')",
            'URL parse error during conversion from string: parse "": empty url',
        ),
        (
            "url('https://example.com:x/')",
            'URL parse error during conversion from string: parse "https://example.com:x/": '
            'invalid port ":x" after host',
        ),
        (
            "url('https://ex%zzample.com/')",
            'URL parse error during conversion from string: parse "https://ex%zzample.com/": '
            'invalid URL escape "%zz"',
        ),
        (
            "url(':foo')",
            'URL parse error during conversion from string: parse ":foo": missing protocol scheme',
        ),
    ],
)
def test_url_errors(expression: str, error: str) -> None:
    assert run(expression)[1] == error


# ip.go (cases from ip_test.go)
@pytest.mark.parametrize(
    ("expression", "value"),
    [
        ("isIP('1.2.3.4')", True),
        ("isIP('2001:db8::1')", True),
        ("isIP('1.2.3')", False),
        ("isIP('fe80::1%eth0')", False),
        ("isIP('::ffff:1.2.3.4')", False),
        ("ip('192.168.0.1').family()", 4),
        ("ip('2001:db8::68').family()", 6),
        ("ip.isCanonical('127.0.0.1')", True),
        ("ip.isCanonical('2001:DB8::1')", False),
        ("ip.isCanonical('2001:db8:0:0:0:0:2:1')", False),
        ("ip.isCanonical('2001:db8::2:1')", True),
        ("string(ip('2001:DB8::1'))", "2001:db8::1"),
        ("ip('0.0.0.0').isUnspecified()", True),
        ("ip('::').isUnspecified()", True),
        ("ip('127.0.0.1').isLoopback()", True),
        ("ip('::1').isLoopback()", True),
        ("ip('224.0.0.1').isLinkLocalMulticast()", True),
        ("ip('ff02::1').isLinkLocalMulticast()", True),
        ("ip('169.254.169.254').isLinkLocalUnicast()", True),
        ("ip('fe80::1').isLinkLocalUnicast()", True),
        ("ip('192.168.0.1').isGlobalUnicast()", True),
        ("ip('255.255.255.255').isGlobalUnicast()", False),
        ("ip('ff00::1').isGlobalUnicast()", False),
        ("ip('127.0.0.1') == ip('127.0.0.1')", True),
        ("ip('2001:db8::1') == ip('2001:DB8::1')", True),
        ("type(ip('127.0.0.1')) == net.IP", True),
        ("ip(object.spec.ip).isLoopback()", False),
    ],
)
def test_ip(expression: str, value: object) -> None:
    assert_value(expression, value)


@pytest.mark.parametrize(
    ("expression", "error"),
    [
        (
            "ip('1.2.3')",
            'IP Address "1.2.3" parse error during conversion from string: '
            'ParseAddr("1.2.3"): IPv4 address too short',
        ),
        (
            "ip('1.2.3.256')",
            'IP Address "1.2.3.256" parse error during conversion from string: '
            'ParseAddr("1.2.3.256"): IPv4 field has value >255',
        ),
        (
            "ip('1.2..4')",
            'IP Address "1.2..4" parse error during conversion from string: '
            'ParseAddr("1.2..4"): IPv4 field must have at least one digit (at ".4")',
        ),
        (
            "ip('foo')",
            'IP Address "foo" parse error during conversion from string: '
            'ParseAddr("foo"): unable to parse IP',
        ),
        ("ip('fe80::1%eth0')", 'IP address "fe80::1%eth0" with zone value is not allowed'),
        ("ip('::ffff:1.2.3.4')", 'IPv4-mapped IPv6 address "::ffff:1.2.3.4" is not allowed'),
    ],
)
def test_ip_errors(expression: str, error: str) -> None:
    assert run(expression)[1] == error


# cidr.go (cases from cidr_test.go)
@pytest.mark.parametrize(
    ("expression", "value"),
    [
        ("isCIDR('192.168.0.0/24')", True),
        ("isCIDR('192.168.0.0')", False),
        ("isCIDR('192.168.0.0/33')", False),
        ("isCIDR('2001:db8::/32')", True),
        ("cidr('192.168.0.0/24').containsIP(ip('192.168.0.1'))", True),
        ("cidr('192.168.0.0/24').containsIP('192.168.1.1')", False),
        ("cidr('192.168.0.0/24').containsIP('2001:db8::1')", False),
        ("cidr('192.168.0.0/24').containsCIDR(cidr('192.168.0.0/25'))", True),
        ("cidr('192.168.0.0/24').containsCIDR('192.168.0.0/23')", False),
        ("cidr('192.168.0.0/24').containsCIDR('192.168.0.0/24')", True),
        ("cidr('192.168.0.1/24').ip() == ip('192.168.0.1')", True),
        ("cidr('192.168.0.1/24').masked() == cidr('192.168.0.0/24')", True),
        ("cidr('192.168.0.1/24') == cidr('192.168.0.0/24')", False),
        ("cidr('192.168.0.0/24').prefixLength()", 24),
        ("cidr('2001:db8::/32').ip().family()", 6),
        ("type(cidr('10.0.0.0/8')) == net.CIDR", True),
    ],
)
def test_cidr(expression: str, value: object) -> None:
    assert_value(expression, value)


@pytest.mark.parametrize(
    ("expression", "error"),
    [
        (
            "cidr('192.168.0.0')",
            "network address parse error during conversion from string: network address "
            "parse error during conversion from string: netip.ParsePrefix(\"192.168.0.0\"): no '/'",
        ),
        (
            "cidr('192.168.0.0/33')",
            "network address parse error during conversion from string: network address "
            'parse error during conversion from string: netip.ParsePrefix("192.168.0.0/33"): '
            "prefix length out of range",
        ),
        (
            "cidr('192.168.0.0/024')",
            "network address parse error during conversion from string: network address "
            'parse error during conversion from string: netip.ParsePrefix("192.168.0.0/024"): '
            'bad bits after slash: "024"',
        ),
        # cidrContainsIPString hands the failed conversion to cidrContainsIP, whose type
        # assertion fails: "no such overload". containsCIDR passes the error on.
        ("cidr('10.0.0.0/8').containsIP('x')", "no such overload"),
        (
            "cidr('10.0.0.0/8').containsCIDR('x')",
            "network address parse error during conversion from string: network address "
            "parse error during conversion from string: netip.ParsePrefix(\"x\"): no '/'",
        ),
    ],
)
def test_cidr_errors(expression: str, error: str) -> None:
    assert run(expression)[1] == error


# cel-go ext/sets.go, and lists.go's indexOf/lastIndexOf
@pytest.mark.parametrize(
    ("expression", "value"),
    [
        ("sets.contains([], [])", True),
        ("sets.contains([1, 2, 3], [])", True),
        ("sets.contains([1, 2, 3], [3, 1])", True),
        ("sets.contains([1, 2, 3], [1.0, 2u])", True),
        ("sets.contains([1], [true])", False),
        ("sets.contains([[1], [2]], [[2]])", True),
        ("sets.equivalent([1, 1, 2], [2, 1])", True),
        ("sets.equivalent([1, 2], [1, 2, 3])", False),
        ("sets.intersects([1, 2], [2, 3])", True),
        ("sets.intersects([1], [])", False),
        ("[1, 2, 2, 3].indexOf(2)", 1),
        ("[1, 2, 2, 3].lastIndexOf(2)", 2),
        ("['a'].indexOf('b')", -1),
        ("'banana'.indexOf('an') == 1 && 'banana'.lastIndexOf('an') == 3", True),
    ],
)
def test_sets_and_list_index(expression: str, value: object) -> None:
    assert_value(expression, value)


# cidr.go / ip.go: string(cidr) and string(ip) (netip's String(); api.celenv dispatch)
@pytest.mark.parametrize(
    ("expression", "value"),
    [
        ("string(cidr('192.168.0.0/24'))", "192.168.0.0/24"),
        ("string(cidr('::1/128'))", "::1/128"),
        ("string(cidr('2001:DB8::/32'))", "2001:db8::/32"),
        ("string(cidr('192.168.0.1/24').masked())", "192.168.0.0/24"),
        ("string(cidr('192.168.0.1/24').ip())", "192.168.0.1"),
        ("string(ip('192.168.0.1'))", "192.168.0.1"),
        ("string(dyn(cidr('10.0.0.0/8'))) + string(dyn(ip('::1')))", "10.0.0.0/8::1"),
        ("string(1) + string('x')", "1x"),
    ],
)
def test_string_of_ip_and_cidr(expression: str, value: object) -> None:
    assert_value(expression, value)


def test_string_of_another_message_is_no_such_overload() -> None:
    """A ``dyn`` URL reaches the shared message overload at run time: cel-go's answer."""
    assert run("string(dyn(url('https://example.com')))") == (None, "no such overload")
    with pytest.raises(CompileError, match="found no matching overload for 'string'"):
        compile_expression("string(url('https://x')) == ''", ResultType.BOOL, with_params=False)
