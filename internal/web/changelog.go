package web

import (
	"fmt"
	"html/template"
	"regexp"
	"strings"

	"rentapi/internal/api"
)

// datePattern is a changelog section's heading: the day the changes reached
// the service.
var datePattern = regexp.MustCompile(`^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$`)

// changelog is CHANGELOG.md as /docs/changelog shows it: the title and the
// text before the first date, then one section per date.
type changelog struct {
	Title    string
	Intro    template.HTML
	Sections []changelogSection
}

// changelogSection is the changes of one date.
type changelogSection struct {
	Date    string
	Changes []template.HTML
}

// newChangelog renders the repository's CHANGELOG.md, embedded in the
// binary, in the little Markdown it is written in: a "# " title,
// paragraphs, "## " dates and "- " items whose lines go on indented by two
// spaces, with **strong** and `code` spans. Anything else is an error, so
// that an entry in another form fails the tests rather than showing
// garbled.
func newChangelog(md string) (*changelog, error) {
	codes := map[string]bool{}
	for _, c := range api.ErrorCodes() {
		codes[c.Code] = true
	}
	render := func(lines []string) template.HTML {
		var b strings.Builder
		writeInline(&b, strings.Join(strings.Fields(strings.Join(lines, " ")), " "), codes)
		return template.HTML(b.String())
	}
	cl := &changelog{}
	var para, item []string
	flush := func() {
		if len(para) > 0 {
			cl.Intro += "<p>" + render(para) + "</p>"
			para = nil
		}
		if len(item) > 0 {
			s := &cl.Sections[len(cl.Sections)-1]
			s.Changes = append(s.Changes, render(item))
			item = nil
		}
	}
	for i, line := range strings.Split(strings.TrimRight(md, "\n"), "\n") {
		bad := func(why string) error {
			return fmt.Errorf("web: CHANGELOG.md line %d: %s: %q", i+1, why, line)
		}
		switch {
		case strings.TrimSpace(line) == "":
			flush()
		case strings.HasPrefix(line, "# "):
			if cl.Title != "" || len(cl.Sections) > 0 {
				return nil, bad("a second title")
			}
			cl.Title = strings.TrimSpace(line[2:])
		case strings.HasPrefix(line, "## "):
			flush()
			date := strings.TrimSpace(line[3:])
			if !datePattern.MatchString(date) {
				return nil, bad("a section is a date, YYYY-MM-DD")
			}
			if n := len(cl.Sections); n > 0 && cl.Sections[n-1].Date <= date {
				return nil, bad("dates go newest first")
			}
			cl.Sections = append(cl.Sections, changelogSection{Date: date})
		case strings.HasPrefix(line, "- "):
			if len(cl.Sections) == 0 {
				return nil, bad("a change before the first date")
			}
			flush()
			item = []string{line[2:]}
		case strings.HasPrefix(line, "  ") && len(item) > 0:
			item = append(item, line)
		case len(cl.Sections) == 0 && !strings.HasPrefix(line, " ") && !strings.HasPrefix(line, "#"):
			para = append(para, line)
		default:
			return nil, bad("not the changelog's Markdown (title, paragraphs before the first date, ## dates, - items)")
		}
	}
	flush()
	if cl.Title == "" || len(cl.Sections) == 0 {
		return nil, fmt.Errorf("web: CHANGELOG.md has no title or no dated section")
	}
	for _, s := range cl.Sections {
		if len(s.Changes) == 0 {
			return nil, fmt.Errorf("web: CHANGELOG.md: %s lists no change", s.Date)
		}
	}
	return cl, nil
}
