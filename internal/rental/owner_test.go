package rental

import "testing"

// A consent page's answer is taken only for the application and from the
// landlord it was shown for; anything else is not found.
func TestCheckConsentAnswer(t *testing.T) {
	cases := []struct {
		name          string
		app, landlord string
		code          string
	}{
		{"its application, its landlord", "app_1", "ll_1", ""},
		{"another application's path", "app_2", "ll_1", "resource_not_found"},
		{"another landlord signed in", "app_1", "ll_2", "resource_not_found"},
		{"neither", "app_2", "ll_2", "resource_not_found"},
		{"no application in the path", "", "ll_1", "resource_not_found"},
	}
	for _, c := range cases {
		if got := code(CheckConsentAnswer("app_1", "ll_1", c.app, c.landlord)); got != c.code {
			t.Errorf("%s: %q, want %q", c.name, got, c.code)
		}
	}
}

// An invoice is shown only to its developer; another's is not found.
func TestInvoiceCheckOwner(t *testing.T) {
	inv := &Invoice{DeveloperID: "dev_1"}
	for dev, want := range map[string]string{"dev_1": "", "dev_2": "resource_not_found", "": "resource_not_found"} {
		if got := code(inv.CheckOwner(dev)); got != want {
			t.Errorf("%q: %q, want %q", dev, got, want)
		}
	}
}
