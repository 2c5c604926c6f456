"""A device as the browser is given it, without a browser: a context's options (none for
desktop: Playwright's default context, as every run before devices), and no CDP session
when nothing is slowed. The benchmark page and throttling in real Chromium:
`test_emulation_e2e.py`."""

from __future__ import annotations

from pagebench.core.devices import DESKTOP
from pagebench.lab.emulation import BENCHMARK_PAGE, Emulation
from pagebench.yamlfiles import builtin_devices


def test_desktop_gives_a_context_no_option_and_slows_nothing():
    assert Emulation().context_options() == {} and Emulation(DESKTOP).context_options() == {}
    assert Emulation().throttle(None, None) is None  # type: ignore[arg-type]  # not even a session


def test_a_phone_gives_the_context_its_screen_touch_and_user_agent():
    phone = builtin_devices().devices["moto-g-power"]
    assert Emulation(phone, 4.2).context_options() == {
        "viewport": {"width": 412, "height": 823}, "device_scale_factor": 1.75, "is_mobile": True, "has_touch": True,
        "user_agent": phone.user_agent}
    assert "user_agent" not in Emulation(phone.model_copy(update={"user_agent": None})).context_options()


def test_the_benchmark_page_needs_no_network():
    assert "src=" not in BENCHMARK_PAGE and "href=" not in BENCHMARK_PAGE and "fetch(" not in BENCHMARK_PAGE
