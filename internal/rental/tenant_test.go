package rental

import "testing"

func TestShowChatLink(t *testing.T) {
	const link, old = "https://line.me/R/ti/p/@rentapi", "https://line.me/R/ti/p/@before"
	shown := func(s *string) string { // "null" or the link, as the JSON shows it
		if s == nil {
			return "null"
		}
		return *s
	}
	tests := []struct {
		name   string
		before string // "" for null
		url    string
		want   string
	}{
		{"configured", "", link, link},
		{"not configured", "", "", "null"},
		{"not configured any more", old, "", "null"},
		{"replaced", old, link, link},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ten := Tenant{ID: "ten_1"}
			if tt.before != "" {
				before := tt.before
				ten.ChatRegistrationURL = &before
			}
			ten.ShowChatLink(tt.url)
			if got := shown(ten.ChatRegistrationURL); got != tt.want {
				t.Errorf("ShowChatLink(%q): chat_registration_url %s; want %s", tt.url, got, tt.want)
			}
		})
	}
}
