package web

import (
	"strings"
	"testing"

	"rentapi"
)

// The changelog renders its own Markdown and refuses any other form, so an
// entry written otherwise fails here instead of showing garbled.
func TestChangelogMarkdown(t *testing.T) {
	t.Parallel()
	cl, err := newChangelog(rentapi.Changelog)
	if err != nil {
		t.Fatal(err)
	}
	if cl.Title != "Changelog" || len(cl.Sections) == 0 || !strings.Contains(string(cl.Intro), "<code>/v2</code>") {
		t.Fatalf("changelog %q, %d sections, intro %s", cl.Title, len(cl.Sections), cl.Intro)
	}
	good := "# Changelog\n\nIntro `code` and **strong** <b>.\n\n## 2026-11-25\n\n- One\n  going on `x`.\n- Two\n\n## 2026-11-23\n\n- Three\n"
	cl, err = newChangelog(good)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(cl.Intro); got != "<p>Intro <code>code</code> and <strong>strong</strong> &lt;b&gt;.</p>" {
		t.Errorf("intro %s", got)
	}
	if len(cl.Sections) != 2 || len(cl.Sections[0].Changes) != 2 || string(cl.Sections[0].Changes[0]) != "One going on <code>x</code>." {
		t.Errorf("sections %+v", cl.Sections)
	}
	for name, md := range map[string]string{
		"a heading that is no date": "# C\n\n## Later\n\n- x\n",
		"dates oldest first":        "# C\n\n## 2026-11-23\n\n- x\n\n## 2026-11-25\n\n- y\n",
		"the same date twice":       "# C\n\n## 2026-11-23\n\n- x\n\n## 2026-11-23\n\n- y\n",
		"a third level":             "# C\n\n## 2026-11-23\n\n### Added\n\n- x\n",
		"another list marker":       "# C\n\n## 2026-11-23\n\n* x\n",
		"a paragraph after a date":  "# C\n\n## 2026-11-23\n\nSome words.\n",
		"a date with no change":     "# C\n\n## 2026-11-25\n\n## 2026-11-23\n\n- x\n",
		"no title":                  "## 2026-11-23\n\n- x\n",
		"no date":                   "# C\n\nWords.\n",
		"a change before a date":    "# C\n\n- x\n",
	} {
		if _, err := newChangelog(md); err == nil {
			t.Errorf("%s: rendered", name)
		}
	}
}
