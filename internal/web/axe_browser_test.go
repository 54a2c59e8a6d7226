package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"
)

// AxeEnv names the file of axe-core (its axe.min.js, the npm package pinned
// in .ci/run) that the browser tests run on every page they look at. Unset,
// the tests look where .ci/run installs it; a missing file skips the browser
// tests, or fails them when RENTAPI_TEST_BROWSER=required.
const AxeEnv = "RENTAPI_TEST_AXE"

// axeRules are the checks a page must pass: text people can read against
// its background, a name for every button, link and form field, and the
// page's language (Thai, with English marked as such) declared and valid.
var axeRules = []string{
	"color-contrast",
	"button-name", "link-name", "input-button-name",
	"label", "select-name", "aria-input-field-name", "aria-toggle-field-name",
	"html-has-lang", "html-lang-valid", "valid-lang",
	"image-alt",
}

var axeOnce struct {
	sync.Once
	source string
	where  string
	err    error
}

// axeFile is where axe.min.js is looked for: $RENTAPI_TEST_AXE, or the
// cache directory .ci/run installs axe-core into.
func axeFile() string {
	if p := os.Getenv(AxeEnv); p != "" {
		return p
	}
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		home, _ := os.UserHomeDir()
		cache = filepath.Join(home, ".cache")
	}
	return filepath.Join(cache, "rentapi-axe", "node_modules", "axe-core", "axe.min.js")
}

// axeSource is axe-core's script, read once; a test that cannot have it
// skips, or fails when the browser tests are required.
func axeSource(t *testing.T) string {
	t.Helper()
	axeOnce.Do(func() {
		axeOnce.where = axeFile()
		b, err := os.ReadFile(axeOnce.where)
		axeOnce.source, axeOnce.err = string(b), err
	})
	if axeOnce.err != nil {
		if os.Getenv(BrowserEnv) == "required" {
			t.Fatalf("%s=required but axe-core is not at %s (set %s, or run .ci/run once): %v", BrowserEnv, axeOnce.where, AxeEnv, axeOnce.err)
		}
		t.Skipf("axe-core is not at %s (set %s to its axe.min.js, or run .ci/run once)", axeOnce.where, AxeEnv)
	}
	return axeOnce.source
}

// axeViolation is one rule a page breaks (or that axe-core could not
// decide), with the elements concerned.
type axeViolation struct {
	ID    string    `json:"id"`
	Help  string    `json:"help"`
	Nodes []axeNode `json:"nodes"`
}

// axeNode is an element a rule concerns.
type axeNode struct {
	Target  []any  `json:"target"`
	Summary string `json:"failureSummary"`
	Any     []struct {
		Data struct {
			MessageKey string `json:"messageKey"`
		} `json:"data"`
	} `json:"any"`
}

// accessible runs axe-core on the page in the window as it is now and
// fails the test for every violation of axeRules, naming the rule, the
// element and what is wrong. The script is put in the page through the
// DevTools protocol, which the page's CSP (no script at all) does not
// govern; the page itself stays without script.
func accessible(ctx context.Context, t *testing.T, name string, width int64) {
	t.Helper()
	src := axeSource(t)
	loaded, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`typeof window.axe === "object"`))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if !loaded {
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[any](src+"\n;true")); err != nil {
			t.Fatalf("%s: injecting axe-core: %v", name, err)
		}
	}
	rules, _ := json.Marshal(axeRules)
	out, err := chromedp.Run(ctx, chromedp.Evaluate[string](`axe.run(document, {runOnly: {type: "rule", values: `+string(rules)+`},
		resultTypes: ["violations", "incomplete"]}).then(r => JSON.stringify({violations: r.violations, incomplete: r.incomplete}))`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("%s at %d px: axe-core: %v", name, width, err)
	}
	var res struct{ Violations, Incomplete []axeViolation }
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%s: axe-core's answer: %v", name, err)
	}
	for _, v := range res.Violations {
		for _, n := range v.Nodes {
			t.Errorf("%s at %d px: %s (%s) at %v: %s", name, width, v.ID, v.Help, n.Target, strings.Join(strings.Fields(n.Summary), " "))
		}
	}
	// axe-core cannot tell text the colour of its background from text
	// meant to be hidden, so it leaves it for review; here it is a fault:
	// every text of these pages is meant to be read.
	for _, v := range res.Incomplete {
		for _, n := range v.Nodes {
			what := fmt.Sprintf("%s at %d px: %s (%s) at %v: %s", name, width, v.ID, v.Help, n.Target, strings.Join(strings.Fields(n.Summary), " "))
			if v.ID == "color-contrast" && n.reason() == "equalRatio" {
				t.Error(what)
			} else {
				t.Log("for review: " + what)
			}
		}
	}
}

// reason is why axe-core could not decide about the element, as its
// message key (equalRatio: the text is the colour of its background).
func (n axeNode) reason() string {
	for _, c := range n.Any {
		if c.Data.MessageKey != "" {
			return c.Data.MessageKey
		}
	}
	return ""
}

// accessibleAtBothSizes looks at the page in the window on a phone and on
// a laptop (the screens), running axe-core at each, and leaves the window
// a laptop's.
func accessibleAtBothSizes(ctx context.Context, t *testing.T, name string) {
	t.Helper()
	for _, size := range screens {
		setScreen(ctx, t, size)
		accessible(ctx, t, name, size.w)
	}
}

// setScreen sizes the window as the screen.
func setScreen(ctx context.Context, t *testing.T, size screen) {
	t.Helper()
	viewport := chromedp.EmulateViewport(size.w, size.h)
	if size.mobile {
		viewport = chromedp.EmulateViewport(size.w, size.h, chromedp.EmulateMobile, chromedp.EmulateTouch)
	}
	if err := chromedp.Do(ctx, viewport); err != nil {
		t.Fatal(fmt.Errorf("window of %d px: %w", size.w, err))
	}
}
