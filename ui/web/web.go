// Package web is the browser front end of the evidence UI: static files
// embedded in the binary. Serving them, their headers and the CSP belong to
// the server; this package only hands out the bytes.
package web

import (
	"embed"
	"io/fs"
)

//go:embed static
var static embed.FS

// Assets returns the static files with the static directory as root
// (app.js, app.css, js/…); the server serves them under /assets/.
func Assets() fs.FS {
	sub, err := fs.Sub(static, "static")
	if err != nil {
		// "static" is embedded above, so Sub cannot fail.
		panic(err)
	}
	return sub
}

// Index returns index.html, the page the server answers for every UI route
// (/login, /complaints/{trace_id}, …); the app routes on the path.
func Index() []byte {
	b, err := static.ReadFile("static/index.html")
	if err != nil {
		// index.html is embedded above, so reading it cannot fail.
		panic(err)
	}
	return b
}
