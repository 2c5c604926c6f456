"""Recording a live page into a site: one cold load in Chromium through mitmproxy."""
