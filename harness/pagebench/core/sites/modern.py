"""`modern`: a present-day page, 69 requests, ~2.03 MB, 10 origins (`*.modern.test`):

  www        /index.html 48,000 (head: 2 CSS, 3 sync JS, 1 async JS)
  static     css/main.css 72,000 and css/theme.css 18,000 (render-blocking, head);
             js/app.js 160,000 (sync, head; inserts js/late.js); js/late.js 42,000
             (2nd wave: inserts the 12 thumbs and ads.js); js/vendor.js 95,000 (defer)
  cdn        lib/polyfill.js 28,000 and lib/framework.js 240,000 (sync, head);
             lib/carousel.js 36,000 (async)
  fonts      sans-regular.woff ~34,000, sans-bold.woff ~32,000, serif-italic.woff
             ~27,000, icons.ttf ~16,000: @font-face in static's main.css (CORS)
  img        logo.svg 6,000; hero.jpg 260,000 (1600x900); p/01..24 product images,
             9,000 + 700 i bytes, jpg/png alternating; banner.png 48,000
  social     icons/s1..s6.svg 1,200 + 240 i; widget.js 31,000 (defer)
  media      posters/v1..v4.jpg 30,000 each
  analytics  a.js 22,000 (async, head; inserts collect.gif); collect.gif 43
  thumbs     t/01..12.jpg, 8,000 + 1,000 i bytes (2nd wave, inserted by late.js)
  ads        ads.js 38,000 (2nd wave); creative/1..3.png 25,000 each (3rd wave)

Everything that is fetched delays the load event (no lazy images, no fetch()).
"""

from __future__ import annotations

from pagebench.core.sites.media import font, gif, jpeg, png, svg, text_file
from pagebench.core.sites.model import GeneratedSite
from pagebench.core.sites.pages import html_page, insert_images, manifest, on_ready


def _m(host: str) -> str:
    return f"{host}.modern.test"


MODERN_ORIGINS = [_m(h) for h in ("www", "static", "cdn", "fonts", "img", "social", "media", "analytics",
                                  "thumbs", "ads")]
MODERN_FONTS = (  # file, family, weight, style, bytes
    ("sans-regular.woff", "PB Sans", 400, "normal", 34_000),
    ("sans-bold.woff", "PB Sans", 700, "normal", 32_000),
    ("serif-italic.woff", "PB Serif", 400, "italic", 27_000),
    ("icons.ttf", "PB Icons", 400, "normal", 16_000),
)


def _script(name: str, code: str, size: int) -> bytes:
    return text_file(f"/* {name} */\n{code}\n", size, f"modern/{name}")



def _insert_script(url: str) -> str:
    return f"    var s = document.createElement('script'); s.src = '{url}'; document.head.appendChild(s);"


def modern() -> GeneratedSite:
    """A present-day page: 69 requests over 10 origins, about 2 MB."""
    www, static, cdn, fonts, img, social, media, analytics, thumbs, ads = MODERN_ORIGINS
    files: dict[str, bytes] = {}

    def add(host: str, path: str, body: bytes) -> str:
        files[host + path] = body
        return f"//{host}{path}"

    faces = "".join(
        f"@font-face {{ font-family: '{family}'; font-weight: {weight}; font-style: {style}; font-display: swap; "
        f"src: url(//{fonts}/{name}) format('{'woff' if name.endswith('.woff') else 'truetype'}'); }}\n"
        for name, family, weight, style, _ in MODERN_FONTS)
    for name, family, weight, style, size in MODERN_FONTS:
        add(fonts, f"/{name}", font(family, "Bold" if weight == 700 else style.title(), size,
                                    "woff" if name.endswith(".woff") else None, f"modern/{name}"))
    css_main = add(static, "/css/main.css", text_file(
        faces + "body { font-family: 'PB Sans', sans-serif; margin: 0; }\nh1, h2, strong { font-weight: 700; }\n"
        "blockquote { font-family: 'PB Serif', serif; font-style: italic; }\n"
        ".icon { font-family: 'PB Icons'; }\n.grid img, #more img { display: inline-block; margin: 4px; }\n",
        72_000, "modern/main.css", css=True))
    css_theme = add(static, "/css/theme.css", text_file(
        "header { background: #123; color: #fff; }\n.hero { width: 100%; height: auto; }\n", 18_000,
        "modern/theme.css", css=True))

    logo = add(img, "/logo.svg", svg(6_000, 160, 40, "modern/logo"))
    icons = [add(social, f"/icons/s{i}.svg", svg(1_200 + 240 * (i - 1), 24, 24, f"modern/s{i}")) for i in range(1, 7)]
    hero = add(img, "/hero.jpg", jpeg(260_000, 1600, 900, "modern/hero"))
    products = []
    for i in range(1, 25):
        ext = "jpg" if i % 2 else "png"
        size, seed = 9_000 + 700 * (i - 1), f"modern/p{i}"
        body = jpeg(size, 300, 300, seed) if ext == "jpg" else png(size, 300, 300, seed)
        products.append(add(img, f"/p/{i:02d}.{ext}", body))
    banner = add(img, "/banner.png", png(48_000, 970, 250, "modern/banner"))
    posters = [add(media, f"/posters/v{i}.jpg", jpeg(30_000, 480, 270, f"modern/v{i}")) for i in range(1, 5)]
    thumb_urls = [add(thumbs, f"/t/{i:02d}.jpg", jpeg(8_000 + 1_000 * (i - 1), 160, 90, f"modern/t{i}"))
                  for i in range(1, 13)]
    ad_urls = [add(ads, f"/creative/{i}.png", png(25_000, 300, 250, f"modern/ad{i}")) for i in range(1, 4)]
    pixel = add(analytics, "/collect.gif", gif(43, "modern/pixel"))

    ads_js = add(ads, "/ads.js", _script("ads.js", on_ready(insert_images("ads", ad_urls, 300, 250)), 38_000))
    late_js = add(static, "/js/late.js", _script(
        "late.js", on_ready(insert_images("more", thumb_urls, 160, 90) + "\n" + _insert_script(ads_js)), 42_000))
    app_js = add(static, "/js/app.js", _script("app.js", "(function () {\n" + _insert_script(late_js) + "\n})();",
                                                160_000))
    a_js = add(analytics, "/a.js", _script("a.js", on_ready(
        f"    var p = new Image(1, 1); p.src = '{pixel}'; p.alt = ''; document.body.appendChild(p);"), 22_000))
    inert = "window.__pb = (window.__pb || []).concat(['{}']);"
    polyfill = add(cdn, "/lib/polyfill.js", _script("polyfill.js", inert.format("polyfill"), 28_000))
    framework = add(cdn, "/lib/framework.js", _script("framework.js", inert.format("framework"), 240_000))
    carousel = add(cdn, "/lib/carousel.js", _script("carousel.js", inert.format("carousel"), 36_000))
    vendor = add(static, "/js/vendor.js", _script("vendor.js", inert.format("vendor"), 95_000))
    widget = add(social, "/widget.js", _script("widget.js", inert.format("widget"), 31_000))

    head = [f'<link rel="stylesheet" href="{css_main}">', f'<link rel="stylesheet" href="{css_theme}">',
            f'<script src="{polyfill}"></script>', f'<script src="{framework}"></script>',
            f'<script src="{app_js}"></script>', f'<script async src="{a_js}"></script>']
    body = [
        f'<header><img src="{logo}" width="160" height="40" alt="Modern"> <nav>'
        + "".join(f'<img src="{u}" width="24" height="24" alt="">' for u in icons) + "</nav></header>",
        f'<img class="hero" src="{hero}" width="1600" height="900" alt="Hero">',
        "<h1>Today's page</h1>", "<blockquote>Seventy requests over ten origins.</blockquote>",
        '<p><span class="icon">ABC</span> <strong>Products</strong></p>',
        '<div class="grid">' + "".join(f'<img src="{u}" width="300" height="300" alt="">' for u in products)
        + "</div>",
        f'<img src="{banner}" width="970" height="250" alt="">',
        '<div class="videos">' + "".join(f'<img src="{u}" width="480" height="270" alt="">' for u in posters)
        + "</div>",
        '<h2>More for you</h2><div id="more"></div>', '<div id="ads"></div>',
        f'<script defer src="{vendor}"></script>', f'<script defer src="{widget}"></script>',
        f'<script async src="{carousel}"></script>',
    ]
    files[www + "/index.html"] = html_page("modern", head, body, 48_000, "modern/index")
    levels = {f"{fonts}/{name}": 2 for name, *_ in MODERN_FONTS}  # from main.css
    levels |= {late_js.removeprefix("//"): 2, pixel.removeprefix("//"): 2}  # app.js, a.js
    levels |= {url.removeprefix("//"): 3 for url in [*thumb_urls, ads_js]}  # late.js
    levels |= {url.removeprefix("//"): 4 for url in ad_urls}  # ads.js
    return GeneratedSite(manifest("modern", MODERN_ORIGINS), files, levels)

