// Package ui serves Strata's web UI: hand-written ES modules, HTML and CSS
// embedded in the binary (assets/), so every server serves it with no
// separate install, no CDN and no network beyond the cell (docs/ui.md).
//
// Its duties:
//
//   - Mount puts the UI beside an API handler: /ui/ serves the assets, GET /
//     redirects a browser to /ui/, and every other path goes to the API
//     untouched. That one call is the whole seam with the server.
//   - Every asset is served with a content hash as its ETag, revalidated on
//     each load (no stale UI after an upgrade), and with headers that keep
//     the page to its own origin: a Content-Security-Policy of 'self' only
//     (no inline script, no remote fetch), no framing, no referrer.
//
// What it must never do: read the cell's state, hold a token, or decide
// what a caller may see. The browser calls the same /v1 API as the CLI, with
// the same TLS and the token the user typed (kept in the tab's
// sessionStorage); the API's ACLs decide, and the UI shows their refusals.
// Nothing here needs a build step: the assets are the source.
package ui
