// Package uitest drives Strata's web UI in a real headless Chromium, as a
// person would: it opens pages, clicks, types and reads what the page
// shows, through the DevTools protocol (chromedp). It is for tests only.
//
// Its duties: find the browser (Debian's /usr/bin/chromium, or
// STRATA_CHROMIUM), start it with flags that work in a container as root
// and reach nothing outside the machine, each browser with a fresh profile;
// fail the test on any uncaught exception or console error of the page; and
// give tests small verbs (Open, Click, WaitText, Eval, Screenshot) that wait
// with a deadline instead of sleeping.
//
// Node and RegisterNodes seed a cell through its API as agents would (a
// realistic topology: regions, zones, racks, NUMA nodes, GPUs).
//
// Without a browser the tests skip and say why, unless
// STRATA_REQUIRE_BROWSER=1 (CI) makes that a failure. It never downloads a
// browser.
package uitest
