"""Addresses as a user writes them (incnn.launch --master-addr), with the
collective library's rules (userspace/collective/addr.c): IPv4, IPv6 with
or without brackets, a scope for link-local IPv6 (fe80::1%eth0), or a
host name."""
import ipaddress
import socket


def normalize_addr(addr: str) -> str:
    """The address as MASTER_ADDR carries it (no brackets); ValueError with
    a one-line reason when it cannot be used."""
    a = addr.strip()
    if len(a) >= 2 and a[0] == "[" and a[-1] == "]":
        a = a[1:-1]
        try:
            ipaddress.IPv6Address(a.split("%", 1)[0])
        except ValueError:
            raise ValueError(f"address {addr!r}: brackets hold an IPv6 "
                             "address") from None
    if not a:
        raise ValueError(f"address {addr!r} is empty")
    host, _, scope = a.partition("%")
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        ip = None
    if isinstance(ip, ipaddress.IPv6Address) and ip.is_link_local \
            and not scope:
        raise ValueError(f"link-local address {addr!r} needs a scope: write "
                         f"it as {host}%IFNAME (e.g. {host}%eth0)")
    try:
        socket.getaddrinfo(a, None, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as e:
        raise ValueError(f"cannot resolve address {addr!r}: {e}") from None
    return a
