package rental

import (
	"fmt"
	"math/bits"
	"slices"
	"strings"
	"time"
)

// Scope is one permission a request can use: a landlord grants scopes to an
// application, the application asks for them, and each key carries a subset.
type Scope string

// The scopes of v1, one per kind of data and direction.
const (
	ScopePropertiesRead     Scope = "properties:read"
	ScopePropertiesWrite    Scope = "properties:write"
	ScopeRoomsRead          Scope = "rooms:read"
	ScopeRoomsWrite         Scope = "rooms:write"
	ScopeTenantsRead        Scope = "tenants:read"
	ScopeTenantsWrite       Scope = "tenants:write"
	ScopeMetersRead         Scope = "meters:read"
	ScopeMetersWrite        Scope = "meters:write"
	ScopeBillsRead          Scope = "bills:read"
	ScopeBillsWrite         Scope = "bills:write"
	ScopePaymentsRead       Scope = "payments:read"
	ScopePaymentsWrite      Scope = "payments:write"
	ScopeNotificationsRead  Scope = "notifications:read"
	ScopeNotificationsWrite Scope = "notifications:write"
	ScopeWebhooksManage     Scope = "webhooks:manage"
)

// AllScopes lists every scope in the order the documentation gives them.
var AllScopes = Scopes{
	ScopePropertiesRead, ScopePropertiesWrite, ScopeRoomsRead, ScopeRoomsWrite,
	ScopeTenantsRead, ScopeTenantsWrite, ScopeMetersRead, ScopeMetersWrite,
	ScopeBillsRead, ScopeBillsWrite, ScopePaymentsRead, ScopePaymentsWrite,
	ScopeNotificationsRead, ScopeNotificationsWrite, ScopeWebhooksManage,
}

// Scopes is a set of scopes kept in AllScopes order, so that two equal sets
// print and store identically.
type Scopes []Scope

// ParseScopes reads a list separated by spaces or commas; "all" means every
// scope. An unknown name is an error naming it.
func ParseScopes(s string) (Scopes, error) {
	fields := strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == ',' })
	var out Scopes
	for _, f := range fields {
		if f == "all" {
			return slices.Clone(AllScopes), nil
		}
		if !slices.Contains(AllScopes, Scope(f)) {
			return nil, Invalid("scopes", "Unknown scope '%s'.", f)
		}
		out = append(out, Scope(f))
	}
	return out.normal(), nil
}

// scopeBits gives each scope of AllScopes its bit, in AllScopes order.
var scopeBits = func() map[Scope]uint32 {
	m := make(map[Scope]uint32, len(AllScopes))
	for i, sc := range AllScopes {
		m[sc] = 1 << i
	}
	return m
}()

// bits is the set as a mask of scopeBits; a name that is no scope has none.
func (s Scopes) bits() uint32 {
	var b uint32
	for _, sc := range s {
		b |= scopeBits[sc]
	}
	return b
}

// fromBits is the set of a mask, in AllScopes order.
func fromBits(b uint32) Scopes {
	out := make(Scopes, 0, bits.OnesCount32(b))
	for i, sc := range AllScopes {
		if b&(1<<i) != 0 {
			out = append(out, sc)
		}
	}
	return out
}

// normal sorts into AllScopes order and drops duplicates.
func (s Scopes) normal() Scopes { return fromBits(s.bits()) }

// Has reports whether the set holds sc.
func (s Scopes) Has(sc Scope) bool { return slices.Contains(s, sc) }

// Intersect returns the scopes present in s and in every other set: what a
// request may use is what the key, the application and the grant all allow.
// It runs on every request and for every event's endpoints, so it works on
// masks rather than comparing names, and when the answer is s itself (a
// key's scopes, all allowed) it is s, with no room to grow, not a copy.
func (s Scopes) Intersect(others ...Scopes) Scopes {
	b := s.bits()
	for _, o := range others {
		b &= o.bits()
	}
	if s != nil && s.exactly(b) {
		return s[:len(s):len(s)]
	}
	return fromBits(b)
}

// exactly reports whether s is the set of mask b in AllScopes order, as
// fromBits(b) would make it.
func (s Scopes) exactly(b uint32) bool {
	if len(s) != bits.OnesCount32(b) {
		return false
	}
	var last uint32
	for _, sc := range s {
		m := scopeBits[sc]
		if m&b == 0 || m <= last {
			return false
		}
		last = m
	}
	return true
}

// String joins the set with spaces, the stored form.
func (s Scopes) String() string {
	parts := make([]string, len(s))
	for i, sc := range s {
		parts[i] = string(sc)
	}
	return strings.Join(parts, " ")
}

// Mode separates the sandbox from real landlords: a test key only ever
// reaches the sandbox and a live key only ever reaches real accounts.
type Mode string

// The two modes.
const (
	ModeTest Mode = "test"
	ModeLive Mode = "live"
)

// Developer is a customer of ours: the owner of applications, billed on a plan.
type Developer struct {
	ID             string
	Name           string
	Plan           DeveloperPlan
	Suspended      bool
	InvoiceOverdue bool // live requests are refused with 402 until it is paid
	CreatedAt      Time
}

// DeveloperPlan names a developer's API plan; it sets the request rates and
// the number of webhook endpoints.
type DeveloperPlan string

// The developer plans of the Limits table.
const (
	PlanFree       DeveloperPlan = "free"
	PlanDeveloper  DeveloperPlan = "developer"
	PlanPro        DeveloperPlan = "pro"
	PlanBusiness   DeveloperPlan = "business"
	PlanEnterprise DeveloperPlan = "enterprise"
)

// PlanLimits are the numbers a developer plan allows.
type PlanLimits struct {
	RatePerSecond    int   // sustained requests per second, per mode
	Burst            int   // bucket size
	MonthlyIncluded  int64 // live requests included per month
	StopsAtIncluded  bool  // free plan: refused past the included amount
	WebhookEndpoints int
}

// Limits returns the plan's numbers. Only the Developer plan's burst is
// given by the specification (60 at 30/s); the others keep the same two
// seconds of headroom.
func (p DeveloperPlan) Limits() PlanLimits {
	switch p {
	case PlanDeveloper:
		return PlanLimits{30, 60, 50_000, false, 5}
	case PlanPro:
		return PlanLimits{100, 200, 500_000, false, 20}
	case PlanBusiness:
		return PlanLimits{200, 400, 2_000_000, false, 50}
	case PlanEnterprise:
		return PlanLimits{500, 1000, 10_000_000, false, 100}
	default:
		return PlanLimits{10, 20, 1_000, true, 2}
	}
}

// Valid reports whether p is one of the plans.
func (p DeveloperPlan) Valid() bool {
	return slices.Contains([]DeveloperPlan{PlanFree, PlanDeveloper, PlanPro, PlanBusiness, PlanEnterprise}, p)
}

// Application is a developer's piece of software that landlords connect to.
type Application struct {
	ID               string
	DeveloperID      string
	Name             string
	Company          string
	Description      string // for the developer's own records; shown only in the portal
	Disabled         bool
	Scopes           Scopes // what the application asks landlords for
	RedirectURIs     []string
	SandboxAccountID string
	CreatedAt        Time
}

// APIKey is a stored key: everything but the secret itself, of which only a
// fingerprint is kept.
type APIKey struct {
	ID            string
	ApplicationID string
	Name          string
	Mode          Mode
	Prefix        string // the first characters, shown to tell keys apart
	Last4         string // the last four characters, shown with Prefix
	Scopes        Scopes
	AccountID     string // a live key bound to one account; "" when unbound
	ExpiresAt     *Time
	RevokedAt     *Time
	RotatedFrom   string
	CreatedAt     Time
	// LastUsedAt is when the key last authenticated a request, to within
	// KeyUseResolution; nil for a key never used.
	LastUsedAt *Time
}

// KeyRotationGraceHours is how long a rotated key keeps working.
const KeyRotationGraceHours = 24

// LandlordPlan names a landlord's own plan with us; it sets how many
// properties and rooms they can keep and whether they take QR payments.
type LandlordPlan string

// The landlord plans.
const (
	LandlordFree     LandlordPlan = "free"
	LandlordStandard LandlordPlan = "standard"
	LandlordPro      LandlordPlan = "pro"
)

// Valid reports whether p is one of the landlord plans.
func (p LandlordPlan) Valid() bool {
	return p == LandlordFree || p == LandlordStandard || p == LandlordPro
}

// Capacity is how many properties and rooms an account may hold.
type Capacity struct {
	Properties int `json:"properties"`
	Rooms      int `json:"rooms"`
}

// SandboxCapacity is the size limit of every sandbox; past it, 429 sandbox_limit.
var SandboxCapacity = Capacity{Properties: 20, Rooms: 500}

// Capacity returns the plan's property and room limits.
func (p LandlordPlan) Capacity() Capacity {
	switch p {
	case LandlordStandard:
		return Capacity{Properties: 10, Rooms: 300}
	case LandlordPro:
		return Capacity{Properties: 500, Rooms: 20000}
	default:
		return Capacity{Properties: 1, Rooms: 30}
	}
}

// Account is one landlord as linked to one application: the unit a request
// acts on. The same landlord has another Account under another application;
// their data is the landlord's, reached through either.
type Account struct {
	ID            string
	ApplicationID string
	LandlordID    string
	Name          string
	Plan          LandlordPlan
	QRPayments    bool
	Sandbox       bool
	Revoked       bool
	Granted       Scopes // what the landlord granted the application
	CreatedAt     Time
	UpdatedAt     Time
}

// AccountObject is the account object of the API: what GET /v1/account
// answers and what the account.linked and account.unlinked events carry,
// made in one place so that both always show the same object.
type AccountObject struct {
	ID        string          `json:"id"`
	Object    string          `json:"object"`
	Name      string          `json:"name"`
	Plan      LandlordPlan    `json:"plan"`
	Features  AccountFeatures `json:"features"`
	Limits    Capacity        `json:"limits"`
	Usage     Capacity        `json:"usage"`
	Scopes    Scopes          `json:"scopes"`
	Livemode  bool            `json:"livemode"`
	CreatedAt Time            `json:"created_at"`
	UpdatedAt Time            `json:"updated_at"`
}

// AccountFeatures are what the landlord's plan switches on.
type AccountFeatures struct {
	QRPayments bool `json:"qr_payments"`
}

// Object shows the account holding usage to a reader who can use scopes
// on it: a request's key ∩ application ∩ grant, or for an event, which no
// key reads alone, the application's scopes the landlord granted.
func (a *Account) Object(usage Capacity, scopes Scopes) AccountObject {
	if scopes == nil {
		scopes = Scopes{}
	}
	return AccountObject{
		ID: a.ID, Object: "account", Name: a.Name, Plan: a.Plan, Features: AccountFeatures{QRPayments: a.QRPayments},
		Limits: a.Capacity(), Usage: usage, Scopes: scopes, Livemode: a.Mode() == ModeLive,
		CreatedAt: a.CreatedAt, UpdatedAt: a.UpdatedAt,
	}
}

// Mode is test for the sandbox and live for every real landlord.
func (a *Account) Mode() Mode {
	if a.Sandbox {
		return ModeTest
	}
	return ModeLive
}

// Capacity is the account's property and room limits.
func (a *Account) Capacity() Capacity {
	if a.Sandbox {
		return SandboxCapacity
	}
	return a.Plan.Capacity()
}

// CheckAddProperty is nil when the account, holding usage, has room for
// one more property under its Capacity, else its CapacityError.
func (a *Account) CheckAddProperty(usage Capacity) error {
	if limit := a.Capacity().Properties; usage.Properties >= limit {
		return a.CapacityError("properties", limit)
	}
	return nil
}

// CheckAddRoom is nil when the account, holding usage, has room for one
// more room under its Capacity, else its CapacityError.
func (a *Account) CheckAddRoom(usage Capacity) error {
	if limit := a.Capacity().Rooms; usage.Rooms >= limit {
		return a.CapacityError("rooms", limit)
	}
	return nil
}

// CapacityError is the error for a full plan: a sandbox answers 429
// sandbox_limit, a real landlord 403 plan_limit_reached.
func (a *Account) CapacityError(what string, limit int) *Error {
	if a.Sandbox {
		e := Errorf(KindRateLimited, "sandbox_limit", "The sandbox holds at most %d %s.", limit, what)
		e.RetryAfter = 86400
		return e
	}
	return Errorf(KindForbidden, "plan_limit_reached",
		"The landlord's %s plan allows at most %d %s.", a.Plan, limit, what)
}

// Key prefixes, one per mode. A key is its prefix and 40 characters of
// [A-Za-z0-9] from crypto/rand (about 238 bits).
const (
	KeyPrefixTest = "svc_test_"
	KeyPrefixLive = "svc_live_"
	keyBodyLen    = 40
	keyAlphabet   = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
)

// NewAPIKeySecret generates the text of a new key of the mode.
func NewAPIKeySecret(m Mode) string {
	prefix := KeyPrefixTest
	if m == ModeLive {
		prefix = KeyPrefixLive
	}
	return prefix + randomString(keyBodyLen, keyAlphabet)
}

// MintedKey is a new key's text, shown once, and what is stored of it.
type MintedKey struct {
	// Text is the key itself: it is shown once and never stored.
	Text string
	// Fingerprint is the text's HMAC under the server secret, by which a
	// request's key is found.
	Fingerprint string
	// Prefix and Last4 are the parts kept in clear to recognise the key in
	// listings (KeyVisiblePrefix, KeyLast4).
	Prefix, Last4 string
}

// MintKey generates a key of the mode and what is stored of it, with
// fingerprint the server secret's (secret.Secret.Fingerprint): the one way
// the portal, the admin command, the test fixtures and the benchmark make
// a key or a rotated key's successor, so that none keeps less of it.
func MintKey(m Mode, fingerprint func(key string) string) MintedKey {
	text := NewAPIKeySecret(m)
	return MintedKey{Text: text, Fingerprint: fingerprint(text), Prefix: KeyVisiblePrefix(text), Last4: KeyLast4(text)}
}

// KeyVisiblePrefix is the part of a key kept in clear to tell keys apart in
// listings: the mode prefix and four characters.
func KeyVisiblePrefix(key string) string {
	if len(key) < len(KeyPrefixTest)+4 {
		return key
	}
	return key[:len(KeyPrefixTest)+4]
}

// KeyLast4 is the part of a key's end kept in clear: with the visible
// prefix, enough to recognise a key in a listing, far too little to use.
func KeyLast4(key string) string {
	if len(key) < len(KeyPrefixTest)+8 {
		return ""
	}
	return key[len(key)-4:]
}

// LooksLikeAPIKey reports whether s has the shape of a key of either mode;
// a key that does not is refused without a database lookup.
func LooksLikeAPIKey(s string) bool {
	var body string
	switch {
	case len(s) == len(KeyPrefixTest)+keyBodyLen && s[:len(KeyPrefixTest)] == KeyPrefixTest:
		body = s[len(KeyPrefixTest):]
	case len(s) == len(KeyPrefixLive)+keyBodyLen && s[:len(KeyPrefixLive)] == KeyPrefixLive:
		body = s[len(KeyPrefixLive):]
	default:
		return false
	}
	for i := 0; i < len(body); i++ {
		c := body[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// Check is nil for one of the developer plans, else 400 naming the plan.
func (p DeveloperPlan) Check() error {
	if !p.Valid() {
		return Invalid("plan", "Unknown developer plan '%s'.", p)
	}
	return nil
}

// QRPayments reports whether the plan takes QR payments: the paid plans do
// (features.qr_payments).
func (p LandlordPlan) QRPayments() bool { return p != LandlordFree }

// Check is nil for one of the landlord plans, else 400 naming the plan.
func (p LandlordPlan) Check() error {
	if !p.Valid() {
		return Invalid("plan", "Unknown landlord plan '%s'.", p)
	}
	return nil
}

// CheckLinkable is nil when a landlord can be linked to an application:
// real landlords only (a sandbox belongs to its one application); and
// nothing is linked to a disabled application, whatever consent page was
// shown before it was disabled.
func CheckLinkable(app *Application, sandbox bool) error {
	if app.Disabled {
		return &Error{Kind: KindForbidden, Code: "application_disabled", Message: "The application is disabled; no account can be linked to it."}
	}
	if sandbox {
		return Invalid("landlord", "A sandbox landlord cannot be linked.")
	}
	return nil
}

// KeyRequest is a key someone asks for, with what the rules of keys look
// at: the application's scopes, whether a real landlord is linked to it,
// and the account to bind (nil when unbound).
type KeyRequest struct {
	Mode      Mode
	Scopes    Scopes
	AppScopes Scopes
	// Linked reports an active link to a real landlord (live keys exist
	// only after one).
	Linked bool
	// Bound is the account a live key is to act on, as loaded; nil for none.
	Bound *Account
	// BoundID is the account asked for ("" for none): a test key is
	// refused one even when it does not exist.
	BoundID string
}

// ErrKeyAccount refuses a key bound to an account that is not a linked
// live account of its application (400 invalid_parameter on account).
var ErrKeyAccount = Invalid("account", "A live key can be bound only to a linked live account.")

// CheckKeyAccountID is nil for the account a new key is bound to as a
// form gives it: none, or an ID of the right shape; anything else is
// ErrKeyAccount at once, without a lookup.
func CheckKeyAccountID(id string) error {
	if id != "" && !WellFormedID(id) {
		return ErrKeyAccount
	}
	return nil
}

// CheckKey is nil when the key may be made: scopes within the
// application's; a test key bound to nothing (it always reaches the
// sandbox); a live key only once a landlord is linked (409
// no_linked_account), bound, if at all, to a linked live account.
func CheckKey(k KeyRequest) error {
	if extra := len(k.Scopes) - len(k.Scopes.Intersect(k.AppScopes)); extra > 0 {
		return Invalid("scopes", "A key's scopes must be a subset of the application's scopes (%s).", k.AppScopes)
	}
	switch k.Mode {
	case ModeTest:
		if k.BoundID != "" {
			return Invalid("account", "A test key always acts on the sandbox; it cannot be bound to an account.")
		}
	case ModeLive:
		if !k.Linked {
			return Conflict("no_linked_account", "A live key can be created only after a landlord account is linked to the application.")
		}
		if k.BoundID != "" && (k.Bound == nil || k.Bound.Sandbox || k.Bound.Revoked) {
			return ErrKeyAccount
		}
	default:
		return Invalid("mode", "mode must be test or live.")
	}
	return nil
}

// Usable reports whether the key is neither revoked nor expired at now.
func (k *APIKey) Usable(now time.Time) bool {
	return k.RevokedAt == nil && (k.ExpiresAt == nil || k.ExpiresAt.After(now))
}

// Rotate makes the key's successor at now, with the same settings, a new
// id and visible prefix and end (its own last use: none yet), and shortens the old key's life to the rotation
// grace period (or leaves its own earlier expiry). A revoked or expired key
// cannot be rotated (409 invalid_state). expiryChanged reports whether the
// old key's ExpiresAt moved.
func (k *APIKey) Rotate(id, prefix, last4 string, now time.Time) (next APIKey, expiryChanged bool, err error) {
	if !k.Usable(now) {
		return APIKey{}, false, Conflict("invalid_state", "Key %s is revoked or expired and cannot be rotated.", k.ID)
	}
	next = *k // the same settings, its own expiry included
	next.ID, next.Prefix, next.Last4, next.RotatedFrom, next.CreatedAt, next.RevokedAt, next.LastUsedAt = id, prefix, last4, k.ID, Time{Time: now}, nil, nil
	grace := now.Add(KeyRotationGraceHours * time.Hour)
	if k.ExpiresAt == nil || k.ExpiresAt.After(grace) {
		k.ExpiresAt, expiryChanged = &Time{Time: grace}, true
	}
	return next, expiryChanged, nil
}

// CheckEndpoints is nil when a developer on the plan holding n webhook
// endpoints may add one, else 403 plan_limit_reached. n counts the
// developer's endpoints of both modes across all its applications: the
// plan's number is the account's, test and live together (a test endpoint
// costs a delivery like a live one).
func (p DeveloperPlan) CheckEndpoints(n int) error {
	if limit := p.Limits().WebhookEndpoints; n >= limit {
		return &Error{Kind: KindForbidden, Code: "plan_limit_reached",
			Message: fmt.Sprintf("The %s plan allows %d webhook endpoints across the developer's applications, test and live together; delete one or change plan.", p, limit)}
	}
	return nil
}

// TestModeOnly is 403 test_mode_only: what a test helper does to a sandbox
// is never done to a real landlord's account.
func TestModeOnly(what string) *Error {
	return &Error{Kind: KindForbidden, Code: "test_mode_only", Message: what}
}

// CheckTestHelper allows a test helper only in test mode: with a live key
// it is 403 test_mode_only.
func CheckTestHelper(mode Mode) error {
	if mode != ModeTest {
		return TestModeOnly("Test helpers work only with test keys (svc_test_...).")
	}
	return nil
}

// Unlink reports whether ending the account's link changes anything: not
// for a link that has ended already (ending it again does nothing). A
// sandbox's link never ends: it is not found, as no link a landlord made.
func (a *Account) Unlink() (bool, error) {
	if a.Sandbox {
		return false, NotFound("account", a.ID)
	}
	return !a.Revoked, nil
}

// CheckReset is nil when the account may be reset to sample data: a
// sandbox only.
func (a *Account) CheckReset() error {
	if !a.Sandbox {
		return TestModeOnly("Only a sandbox can be reset.")
	}
	return nil
}
