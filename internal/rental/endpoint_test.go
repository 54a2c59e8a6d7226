package rental

import "testing"

// A disabled endpoint is sent nothing a developer asks for; a test event
// comes from an account of the endpoint's mode whose link holds.
func TestEndpointSends(t *testing.T) {
	t.Parallel()
	test := &WebhookEndpoint{ID: "we_1", Mode: ModeTest, Status: EndpointEnabled}
	live := &WebhookEndpoint{ID: "we_2", Mode: ModeLive, Status: EndpointEnabled}
	off := &WebhookEndpoint{ID: "we_3", Mode: ModeLive, Status: EndpointDisabled}
	sandbox := &Account{ID: "acct_sb", Sandbox: true}
	linked := &Account{ID: "acct_live"}
	ended := &Account{ID: "acct_ended", Revoked: true}
	cases := []struct {
		name     string
		endpoint *WebhookEndpoint
		acct     *Account
		sendable string
		test     string
	}{
		{"test endpoint, sandbox", test, sandbox, "", ""},
		{"live endpoint, linked landlord", live, linked, "", ""},
		{"test endpoint, live account", test, linked, "", "resource_not_found"},
		{"live endpoint, sandbox", live, sandbox, "", "resource_not_found"},
		{"live endpoint, ended link", live, ended, "", "resource_not_found"},
		{"live endpoint, no account", live, nil, "", "account_required"},
		{"disabled endpoint", off, linked, "webhook_endpoint_disabled", "webhook_endpoint_disabled"},
		{"disabled endpoint, no account", off, nil, "webhook_endpoint_disabled", "webhook_endpoint_disabled"},
	}
	for _, c := range cases {
		if got := code(c.endpoint.CheckSendable()); got != c.sendable {
			t.Errorf("%s: sendable %q, want %q", c.name, got, c.sendable)
		}
		err := c.endpoint.CheckTestEvent(c.acct)
		if got := code(err); got != c.test {
			t.Errorf("%s: test event %q, want %q", c.name, got, c.test)
		}
		if e, ok := AsError(err); ok && map[string]Kind{"resource_not_found": KindNotFound, "account_required": KindForbidden,
			"webhook_endpoint_disabled": KindConflict}[e.Code] != e.Kind {
			t.Errorf("%s: kind %d", c.name, e.Kind)
		}
	}
}
