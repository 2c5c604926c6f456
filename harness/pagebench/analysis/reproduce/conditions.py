"""The seeds' conditions and ours, as the claims state them (`claims.py`): the papers'
words with where they say them, and what the scenarios set."""

from __future__ import annotations

#: Seed 004's link: its text and its Table 1 disagree, and the text's figures need its 60 ms.
US_NZ = ("E3, 60 ms each way (§2: 2.2 Mbit/s = 32767 B x 8 / 0.120 s); Table 1's 'US/NZ Delay 320ms' conflicts "
         "with it (0.4-0.8 Mbit/s): the text's 60 ms taken")

#: Seed 000's conditions: the paper's (where it states them) and ours (as the scenarios set them).
REMOTE_32 = ("the remote server, best-case RTT 70 ms, 1460-byte segments (§3.2, l. 88); the best of ten trials, "
             "'a reasonable window size' (l. 90, 95)")
OURS_REMOTE_32 = ("T1 70 ms, 1.544 Mbit/s, MSS 1460, new connection per transfer, goodput from request to last "
                  "byte, best case the 512 KB transfer; median of 3 loads; era: Reno from 1 segment")
LOCAL_32 = ("the local server, RTT under 1 ms, 1460-byte segments, no slow start (ULTRIX) (§3.2, l. 88, 102); "
            "capacity: 10 Mbit/s Ethernet (§6, l. 185)")
OURS_LOCAL_32 = "LAN 0.5 ms, 10 Mbit/s, MSS 1460, direct; median of 12 loads; era: initial window 10 (no slow start)"
REMOTE_6 = ("Mosaic 2.4 and NCSA httpd 1.3, one connection at a time, network retrieval times (§6, l. 183); T1 "
            "1.544 Mbit/s, best-case RTT about 70 ms (l. 185); MSS 1460, slow start not limiting (l. 209)")
OURS_REMOTE_6 = ("T1 70 ms, 1.544 Mbit/s, MSS 1460, through the edge proxy with one upstream connection; network "
                 "retrieval time (first request to last byte); median of 4 loads; era: initial window 2, Reno")
OURS_FIRST = ("T1 70 ms, 1.544 Mbit/s, a 2 KB image, through the edge proxy with one upstream connection; what "
              "the HTML's and the image's requests waited (sending to first byte), summed; median of 5 loads; era: "
              "initial window 2")
LOCAL_6 = ("Mosaic 2.4 and NCSA httpd 1.3, one connection at a time, network retrieval times (§6, l. 183); "
           "10 Mbit/s Ethernet, small RTT (l. 185)")
OURS_LOCAL_6 = ("LAN 0.5 ms, 10 Mbit/s, direct (no proxy: Chromium's up to 6 connections, not one); network "
                "retrieval time; median of 20 loads")
#: Seed 001's traces and our page history, as the 001 claims state them.
PROXY_TRACE = ("the proxy trace: Digital's Palo Alto proxy, 45 hours from 4 Dec 1996, 142913 delta-eligible of "
               "377962 status-200 responses; vdelta against the previous status-200 instance of the same URL, "
               "computed offline from the trace (§3.1, §4.1, §5.4)")
PACKET_TRACE = ("the packet-level trace: AT&T Labs' Internet link, Murray Hill, 17 days from 8 Nov 1996, 83991 "
                "delta-eligible of 819998 status-200 responses, vdelta computed offline per content-type (§3.2, "
                "§4.2, §5.7)")
GZIP_TRACE = ("the packet-level trace: every status-200 {} response ({}), gzip computed offline (§3.2, §4.2, "
              "§5.7)")
OURS_HISTORY = ("toybox's web pages (landley.net/toybox, 0BSD): the last 5 instances of each of its 10 text pages, "
                "each instance loaded warm by Chromium after the one before it (40 responses), h2, TLS 1.3, `lte`; "
                "bytes as received, dcz (zstd against the previous instance) against the page whole")
OURS_CHANGED = "; no response is unchanged (the paper's changed responses alone: {paper})"
#: The byte rows' intervals resample the history's responses (the bytes are exact).
RESPONSES = "responses (a longer page history)"
