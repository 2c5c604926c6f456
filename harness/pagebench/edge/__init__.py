"""The edge proxy: mitmproxy in the client namespace, with pagebench's own upstream
strategies (HTTP/1.0, keep-alive, pipelining, HTTP/2) across the link."""
