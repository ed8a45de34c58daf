"""Save full-page screenshots of the page for the README: 1280 and 375 px wide, light and dark.

    python scripts/screenshots.py [--out docs/screenshots] [--chromium /usr/bin/chromium]

Starts `infercost serve` on a free loopback port, lets step 1 stream and step 4 simulate, then
writes page-{1280,375}-{light,dark}.png.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from infercost.server_process import running_server

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
SIZES = [(1280, 900), (375, 812)]
SCHEMES = ["light", "dark"]






def shoot(browser, url: str, width: int, height: int, scheme: str, out: Path) -> list[str]:
    context = browser.new_context(viewport={"width": width, "height": height}, color_scheme=scheme,
                                  device_scale_factor=1)
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda m: m.type == "error" and errors.append(m.text))
    page.goto(url)
    page.wait_for_function("() => window.infercost && window.infercost.rendered > 0")
    page.locator("#step-1").scroll_into_view_if_needed()
    page.locator("#s1-replay").click()
    page.locator("#s4-simulate").scroll_into_view_if_needed()
    page.locator("#s4-simulate").click()
    page.wait_for_selector("#s4-check:not([hidden])", timeout=20_000)
    page.wait_for_timeout(2500)  # let the answer in step 1 stream a while
    page.evaluate("() => window.scrollTo(0, 0)")
    page.wait_for_timeout(200)
    page.screenshot(path=str(out), full_page=True)
    context.close()
    return errors


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots")
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    args.out.mkdir(parents=True, exist_ok=True)
    with running_server("https://course.example/ai") as (url, _):
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=args.chromium, args=CHROMIUM_ARGS)
            for width, height in SIZES:
                for scheme in SCHEMES:
                    path = args.out / f"page-{width}-{scheme}.png"
                    errors = shoot(browser, url, width, height, scheme, path)
                    print(f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}"
                          + (f"  console errors: {errors}" if errors else ""))
            browser.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
