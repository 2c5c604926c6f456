"""The origin servers' access logs read back (pure): nginx's tab-separated fields and
Caddy's JSON lines, as requests and connections per server address."""

from __future__ import annotations

import json

from pagebench.core.servers.accesslog import ServerLog, connection_key, parse_caddy_log, parse_nginx_log, summarize

# nginx ------------------------------------------------------------------------------------------

NGINX_LINES = [
    "1763780000.101\t0.002\t198.19.0.1\t7\t1\tHTTP/1.1\tTLSv1.3\t200\t527\twww.gen.test\t/\tGET\t801",
    "1763780000.105\t0.001\t198.19.0.1\t7\t2\tHTTP/1.1\tTLSv1.3\t200\t2544\twww.gen.test\t/img/0001.png\tGET\t2811",
    "1763780000.107\t0.001\t198.19.0.2\t8\t1\tHTTP/1.1\tTLSv1.3\t200\t2544\to2.gen.test\t/img/0002.png\tGET\t2811",
    "1763780000.109\t0.001\t2001:2:0:100::1\t7\t3\tHTTP/2.0\tTLSv1.2\t304\t0\twww.gen.test\t/\tGET\t180",
]


def test_the_nginx_parser_reads_every_field():
    records, malformed = parse_nginx_log("\n".join(NGINX_LINES) + "\n")
    assert malformed == 0 and len(records) == 4
    first = records[0]
    assert (first.end, first.request_time, first.server_addr, first.connection, first.connection_requests) == \
        (1763780000.101, 0.002, "198.19.0.1", 7, 1)
    assert (first.protocol, first.tls, first.status, first.body_bytes, first.host, first.uri, first.method,
            first.bytes_sent) == ("HTTP/1.1", "TLSv1.3", 200, 527, "www.gen.test", "/", "GET", 801)
    assert records[3].server_addr == "2001:2:0:100::1" and records[3].status == 304


def test_the_nginx_parser_leaves_a_partial_last_line_and_counts_garbage():
    text = "\n".join(NGINX_LINES[:2]) + "\nnot a log line\n" + NGINX_LINES[2][:20]
    records, malformed = parse_nginx_log(text)
    assert len(records) == 2 and malformed == 1
    assert parse_nginx_log("") == ([], 0)


def test_connections_are_distinct_address_and_connection_pairs():
    records, _ = parse_nginx_log("\n".join(NGINX_LINES) + "\n")
    log = summarize(records)
    assert log.connections == 3  # (.2, 7), (.3, 8), (::2, 7): same serial on another address counts apart
    assert log.connections_by_host() == {"o2.gen.test": 1, "www.gen.test": 2}
    assert summarize(records, hosts={"www.gen.test"}).connections == 2
    assert summarize(records, addresses={"198.19.0.1"}).connections == 1
    assert summarize(records, hosts={"www.gen.test"}, addresses={"198.19.0.1"}).requests == 2
    assert log.requests == 4 and len(log.records) == 4


def test_statuses_for_the_document():
    records, _ = parse_nginx_log("\n".join(NGINX_LINES) + "\n")
    log = summarize(records)
    assert log.statuses_for("/") == (200, 304)
    assert log.statuses_for("/", host="o2.gen.test") == ()
    assert log.statuses_for("/img/0001.png") == (200,)
    query = NGINX_LINES[0].replace("\t/\tGET", "\t/?v=1\tGET")
    assert summarize(parse_nginx_log(query + "\n")[0]).statuses_for("/") == (200,)


# Caddy (HTTP/3) ----------------------------------------------------------------------------------


def entry(uri: str = "/", port: int = 34891, logger: str = "http.log.access.pb0", ip: str = "198.18.0.2",
          status: int = 200, size: int = 1735, host: str = "www.seed000.test", version: int = 0) -> str:
    """One access-log line as Caddy writes it for HTTP/3 (headers trimmed). Caddy 2.6
    logged TLS version 0 over QUIC, 2.11 logs 0x0304 (and client_ip, bytes_read)."""
    return json.dumps({
        "level": "info", "ts": 1795335294.34665, "logger": logger, "msg": "handled request",
        "request": {"remote_ip": ip, "remote_port": str(port), "proto": "HTTP/3.0", "method": "GET", "host": host,
                    "uri": uri, "headers": {"Accept": ["*/*"]},
                    "tls": {"resumed": False, "version": version, "cipher_suite": 0, "proto": "", "server_name": ""}},
        "user_id": "", "duration": 0.000185847, "size": size, "status": status,
        "resp_headers": {"Server": ["Caddy"], "Cache-Control": ["no-cache"]},
    })


CADDY_LINES = [
    entry(),
    entry("/img/small-01.png", size=2544),
    entry("/img/small-02.png", port=40000, size=2544),
    entry("/x.png", logger="http.log.access.pb7", ip="2001:2::2", host="O2.gen.test:443", version=0x0304),
    entry("/", status=304, size=0, port=40001),
]


def test_the_caddy_parser_reads_every_field():
    records, malformed = parse_caddy_log("\n".join(CADDY_LINES) + "\n")
    assert malformed == 0 and len(records) == 5
    first = records[0]
    assert (first.end, first.request_time, first.server_addr, first.connection_requests) == \
        (1795335294.34665, 0.000185847, "198.19.0.1", 1)
    assert (first.protocol, first.tls, first.status, first.body_bytes, first.host, first.uri, first.method,
            first.bytes_sent) == ("HTTP/3.0", "TLSv1.3", 200, 1735, "www.seed000.test", "/", "GET", 1735)
    assert first.connection == connection_key("198.18.0.2", 34891)
    assert records[1].connection == first.connection and records[1].connection_requests == 2
    v6 = records[3]
    assert (v6.server_addr, v6.host, v6.tls) == ("2001:2:0:100::8", "o2.gen.test", "TLSv1.3")  # pb7: index 7, IPv6
    assert records[4].status == 304 and records[4].body_bytes == 0


def test_a_connection_is_a_client_address_and_port_at_one_server_address():
    log = summarize(parse_caddy_log("\n".join(CADDY_LINES) + "\n")[0])
    assert log.requests == 5 and log.connections == 4  # ports 34891 (x2), 40000, 40001; the IPv6 one
    assert log.connections_by_host() == {"o2.gen.test": 1, "www.seed000.test": 3}
    assert summarize(parse_caddy_log(CADDY_LINES[0] + "\n")[0], addresses={"198.19.0.2"}).requests == 0
    assert log.statuses_for("/") == (200, 304)
    assert connection_key("198.18.0.2", 1) != connection_key("198.18.0.3", 1)
    assert connection_key("2001:2::2", 443) != connection_key("198.18.0.2", 443)


def test_the_caddy_parser_leaves_a_partial_last_line_and_counts_what_is_not_ours():
    text = "\n".join([CADDY_LINES[0], "not json", json.dumps({"msg": "no request"}),
                      entry(logger="http.log.access"), entry(logger="http.log.access.other"), CADDY_LINES[1][:30]])
    records, malformed = parse_caddy_log(text)
    assert len(records) == 1 and malformed == 4
    assert parse_caddy_log("") == ([], 0)
    assert isinstance(summarize(records), ServerLog)
