// Package rentapi is the repository's root. It holds the documents kept
// beside the code that the service also serves, embedded so that each has
// one source; the program itself is cmd/rentapi.
package rentapi

import _ "embed"

// Changelog is CHANGELOG.md, every change to API v1 with its date: the
// site renders it at /docs/changelog, so the repository and the site never
// say different things.
//
//go:embed CHANGELOG.md
var Changelog string

// Readme is README.md: the docs' quickstart (/docs) shows its month in
// curl, the blocks a test runs as pasted.
//
//go:embed README.md
var Readme string
