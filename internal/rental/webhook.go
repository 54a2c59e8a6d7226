package rental

import (
	"crypto/rand"
	"encoding/json"
	"math/big"
	"slices"
	"strings"
	"time"
)

// Prefixes of the webhook objects.
const (
	PrefixWebhookEndpoint = "we"
	PrefixDelivery        = "whdl"
	// SecretPrefix starts every webhook signing secret.
	SecretPrefix = "whsec_"
)

// Event is the event object of the API and of every webhook body: the same
// stored event shown to one account.
type Event struct {
	ID         string    `json:"id"`
	Object     string    `json:"object"`
	Type       string    `json:"type"`
	APIVersion string    `json:"api_version"`
	Mode       Mode      `json:"mode"`
	AccountID  string    `json:"account_id"`
	CreatedAt  Time      `json:"created_at"`
	Data       EventData `json:"data"`
}

// EventData holds the affected object exactly as the API returned it.
type EventData struct {
	Object json.RawMessage `json:"object"`
}

// NewEvent shows a stored event to one account.
func NewEvent(id, typ string, mode Mode, accountID string, created Time, object json.RawMessage) Event {
	return Event{ID: id, Object: "event", Type: typ, APIVersion: "v1", Mode: mode, AccountID: accountID,
		CreatedAt: created, Data: EventData{Object: object}}
}

// EventTypes lists every event type of v1, for validating subscriptions.
var EventTypes = []string{
	"property.created", "property.updated", "property.deleted",
	"room.created", "room.updated", "room.deleted",
	"tenant.created", "tenant.updated", "tenant.deleted", "tenant.line_registered",
	"settlement.created", "settlement.closed",
	"meter.reading.created", "meter.reading.updated",
	"bill.created", "bill.updated", "bill.overdue", "bill.deleted",
	"payment.pending", "payment.paid", "payment.failed",
	"slip.verified", "slip.rejected",
	"notification.sent", "notification.failed",
	"webhook.test",
	"account.linked", "account.unlinked",
}

// The events of a link between a landlord and an application. They are the
// application's own business: only that application sees them, in live
// mode, and they need no scope beyond the link itself.
const (
	EventAccountLinked   = "account.linked"
	EventAccountUnlinked = "account.unlinked"
)

// EventScopes is the read scope each event type prefix needs: a reader sees,
// and an endpoint receives, only events about data it could read. An empty
// Scope needs none: any key that reaches the account reads them.
var EventScopes = []struct {
	Prefix string
	Scope  Scope
}{
	{"account.", ""},
	{"property.", ScopePropertiesRead},
	{"room.", ScopeRoomsRead},
	{"tenant.", ScopeTenantsRead},
	{"settlement.", ScopeTenantsRead},
	{"meter.", ScopeMetersRead},
	{"bill.", ScopeBillsRead},
	{"payment.", ScopePaymentsRead},
	{"slip.", ScopePaymentsRead},
	{"notification.", ScopeNotificationsRead},
	{"webhook.", ScopeWebhooksManage},
}

// CanRead reports whether scopes allow reading events of type typ.
func (s Scopes) CanRead(typ string) bool {
	for _, es := range EventScopes {
		if strings.HasPrefix(typ, es.Prefix) {
			return es.Scope == "" || s.Has(es.Scope)
		}
	}
	return false
}

// EventPrefixes are the prefixes of the event types scopes allow reading,
// for filtering a list of events in the database.
func (s Scopes) EventPrefixes() []string {
	var out []string
	for _, es := range EventScopes {
		if es.Scope == "" || s.Has(es.Scope) {
			out = append(out, es.Prefix)
		}
	}
	return out
}

// Endpoint states.
const (
	EndpointEnabled  = "enabled"
	EndpointDisabled = "disabled"
)

// WebhookEndpoint is where an application wants its events: one URL of one
// mode, with the types it wants and the secret its deliveries are signed
// with. Secrets stay in the store; the API shows one only when it is made.
type WebhookEndpoint struct {
	ID             string   `json:"id"`
	Object         string   `json:"object"`
	URL            string   `json:"url"`
	Mode           Mode     `json:"mode"`
	EnabledEvents  []string `json:"enabled_events"`
	Status         string   `json:"status"`
	DisabledReason *string  `json:"disabled_reason"`
	Description    *string  `json:"description"`
	// Secret is set only in the responses that create it.
	Secret    string `json:"secret,omitempty"`
	CreatedAt Time   `json:"created_at"`
	UpdatedAt Time   `json:"updated_at"`

	ApplicationID string `json:"-"`
}

// Wants reports whether the endpoint subscribed to events of type typ.
func (e *WebhookEndpoint) Wants(typ string) bool {
	return slices.Contains(e.EnabledEvents, "*") || slices.Contains(e.EnabledEvents, typ)
}

// ErrEndpointDisabled refuses a send a developer asks of a disabled
// endpoint (409 webhook_endpoint_disabled).
var ErrEndpointDisabled = Errorf(KindConflict, "webhook_endpoint_disabled",
	"The webhook endpoint is disabled; enable it (PATCH with status 'enabled') first.")

// CheckSendable is nil when a developer may have the endpoint sent
// something now (a test event, a delivery again): it is enabled. Else
// ErrEndpointDisabled: a disabled endpoint is sent nothing, so enabling it
// is a decision taken first, on its own.
func (e *WebhookEndpoint) CheckSendable() error {
	if e.Status != EndpointEnabled {
		return ErrEndpointDisabled
	}
	return nil
}

// CheckTestEvent is nil when a webhook.test event may be sent to the
// endpoint from acct, the account it belongs to: the endpoint sendable
// (CheckSendable), and an account given (403 account_required, as an
// unbound live key that named none), of the endpoint's mode and still
// linked; another is not found, as an account the application cannot
// reach.
func (e *WebhookEndpoint) CheckTestEvent(acct *Account) error {
	if err := e.CheckSendable(); err != nil {
		return err
	}
	switch {
	case acct == nil:
		return Errorf(KindForbidden, "account_required",
			"A test event belongs to an account: send the %s header naming one linked to the application.", AccountHeader)
	case acct.Mode() != e.Mode || acct.Revoked:
		return NotFound("account", acct.ID)
	}
	return nil
}

// ParseEnabledEvents checks a subscription: ["*"] or known event types, at
// least one, without repeats.
func ParseEnabledEvents(list []string) ([]string, error) {
	if len(list) == 0 {
		return nil, Invalid("enabled_events", "enabled_events must list at least one event type, or be [\"*\"] for all.")
	}
	if len(list) > len(EventTypes) {
		return nil, Invalid("enabled_events", "enabled_events lists more types than exist.")
	}
	out := make([]string, 0, len(list))
	for _, t := range list {
		switch {
		case t == "*" && len(list) == 1:
		case t == "*":
			return nil, Invalid("enabled_events", "\"*\" means every event type and must be the only entry.")
		case !slices.Contains(EventTypes, t):
			return nil, Invalid("enabled_events", "Unknown event type '%s'.", t)
		case slices.Contains(out, t):
			return nil, Invalid("enabled_events", "Event type '%s' is listed twice.", t)
		}
		out = append(out, t)
	}
	return out, nil
}

// MaxEndpointDescription is the longest description of an endpoint, in
// characters.
const MaxEndpointDescription = 500

// EndpointChange is an endpoint's settings as a client gave them: a new
// endpoint's, or the changes to one. The API reads it from JSON and the
// portal from a form; Check judges both alike.
type EndpointChange struct {
	URL           Optional[string]
	EnabledEvents Optional[[]string]
	Description   Optional[string]
	// Status is for a change only: a new endpoint starts enabled.
	Status Optional[string]
}

// EndpointSpec is a checked EndpointChange: a new endpoint, or the changes
// to one (nil: unchanged).
type EndpointSpec struct {
	URL           *string
	EnabledEvents []string
	Description   **string
	Status        *string
	// DisabledReason is what a disabled endpoint shows as the reason: where
	// it was disabled (the API, the portal). The caller sets it.
	DisabledReason string
}

// Check validates a change, for a new endpoint when create is set (url and
// enabled_events required). checkURL is the address guard: it returns the
// URL as deliveries will use it, or why it is refused (400 invalid_url).
func (c EndpointChange) Check(create bool, checkURL func(string) (string, error)) (EndpointSpec, error) {
	var spec EndpointSpec
	switch {
	case create && !c.URL.Set:
		return spec, Missing("url")
	case create && !c.EnabledEvents.Set:
		return spec, Missing("enabled_events")
	case create && c.Status.Set:
		return spec, Invalid("status", "A new endpoint is always enabled; status can only be changed.")
	case c.URL.Set && c.URL.Null:
		return spec, Invalid("url", "url cannot be null.")
	case c.EnabledEvents.Set && c.EnabledEvents.Null:
		return spec, Invalid("enabled_events", "enabled_events cannot be null; use [\"*\"] for every type.")
	}
	if c.URL.Set {
		u, err := checkURL(c.URL.Value)
		if err != nil {
			return spec, &Error{Kind: KindInvalid, Code: "invalid_url", Param: "url", Message: "url is refused: " + err.Error() + "."}
		}
		spec.URL = &u
	}
	if c.EnabledEvents.Set {
		events, err := ParseEnabledEvents(c.EnabledEvents.Value)
		if err != nil {
			return spec, err
		}
		spec.EnabledEvents = events
	}
	if c.Description.Set {
		var d *string
		if !c.Description.Null {
			if err := checkLines("description", c.Description, 0, MaxEndpointDescription); err != nil {
				return spec, err
			}
			d = &c.Description.Value
		}
		spec.Description = &d
	}
	if c.Status.Set {
		if v := c.Status.Value; c.Status.Null || (v != EndpointEnabled && v != EndpointDisabled) {
			return spec, Invalid("status", "status must be 'enabled' or 'disabled'.")
		}
		spec.Status = &c.Status.Value
	}
	return spec, nil
}

// NewSigningSecret returns a fresh webhook signing secret: "whsec_" and 32
// random letters and digits.
func NewSigningSecret() string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, 32)
	for i := range b {
		n, err := rand.Int(rand.Reader, big.NewInt(int64(len(alphabet))))
		if err != nil {
			panic(err) // crypto/rand does not fail on supported platforms
		}
		b[i] = alphabet[n.Int64()]
	}
	return SecretPrefix + string(b)
}

// SecretOverlap is how long the old secret still signs after a rotation.
const SecretOverlap = 24 * time.Hour

// Delivery states.
const (
	DeliveryPending   = "pending"
	DeliverySucceeded = "succeeded"
	DeliveryFailed    = "failed"
)

// Delivery is one event on its way to one endpoint, with every attempt made.
type Delivery struct {
	ID            string    `json:"id"`
	Object        string    `json:"object"`
	EndpointID    string    `json:"endpoint_id"`
	EventID       string    `json:"event_id"`
	EventType     string    `json:"event_type"`
	Status        string    `json:"status"`
	AttemptCount  int       `json:"attempt_count"`
	NextAttemptAt *Time     `json:"next_attempt_at"`
	Attempts      []Attempt `json:"attempts"`
	CreatedAt     Time      `json:"created_at"`
	UpdatedAt     Time      `json:"updated_at"`

	// Body is the event as sent, byte for byte, on every attempt.
	Body string `json:"-"`
	// Generation changes when the delivery is resent, so that a job
	// scheduled before the resend knows it is stale.
	Generation int `json:"-"`
}

// Attempt is one POST of a delivery and what came back.
type Attempt struct {
	Attempt      int     `json:"attempt"`
	AttemptedAt  Time    `json:"attempted_at"`
	StatusCode   *int    `json:"status_code"`
	DurationMS   int64   `json:"duration_ms"`
	Error        *string `json:"error"`
	ResponseBody string  `json:"response_body"`
}

// Succeeded reports whether the receiver took the delivery: any 2xx.
func (a *Attempt) Succeeded() bool {
	return a.StatusCode != nil && *a.StatusCode >= 200 && *a.StatusCode < 300
}

// MaxAttempts is how many times a delivery is tried before it fails.
const MaxAttempts = 8

// RetryGaps are the waits after failed attempts 1 to 7.
var RetryGaps = []time.Duration{time.Minute, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 6 * time.Hour, 12 * time.Hour, 24 * time.Hour}

// RetryJitter is the largest share of a gap added at random, so that an
// endpoint coming back is not hit by every retry at once.
const RetryJitter = 0.1

// NextAttempt returns when to try again after failed attempt n (1-based) at
// now, with up to RetryJitter of the gap added by jitter (a number in [0,1)),
// or false when the attempts are used up.
func NextAttempt(n int, now time.Time, jitter float64) (time.Time, bool) {
	if n < 1 || n > len(RetryGaps) {
		return time.Time{}, false
	}
	gap := RetryGaps[n-1]
	return now.Add(gap + time.Duration(float64(gap)*RetryJitter*jitter)), true
}

// FailingFor is how long every delivery to an endpoint may fail before the
// endpoint is disabled.
const FailingFor = 72 * time.Hour
