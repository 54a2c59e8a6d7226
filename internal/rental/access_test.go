package rental

import (
	"testing"
	"time"
)

// The rules of new keys: scopes within the application's, test keys bound
// to nothing, live keys only after a link and bound only to a linked live
// account.
func TestCheckKey(t *testing.T) {
	t.Parallel()
	app := Scopes{ScopePropertiesRead, ScopeBillsRead}
	live := &Account{ID: "acct_live"}
	cases := []struct {
		name string
		req  KeyRequest
		code string
	}{
		{"test key", KeyRequest{Mode: ModeTest, Scopes: Scopes{ScopeBillsRead}, AppScopes: app}, ""},
		{"scopes beyond the application's", KeyRequest{Mode: ModeTest, Scopes: Scopes{ScopeBillsWrite}, AppScopes: app}, "invalid_parameter"},
		{"test key bound", KeyRequest{Mode: ModeTest, AppScopes: app, BoundID: "acct_live", Bound: live}, "invalid_parameter"},
		{"live key before a link", KeyRequest{Mode: ModeLive, AppScopes: app}, "no_linked_account"},
		{"live key", KeyRequest{Mode: ModeLive, AppScopes: app, Linked: true}, ""},
		{"live key bound", KeyRequest{Mode: ModeLive, AppScopes: app, Linked: true, BoundID: "acct_live", Bound: live}, ""},
		{"bound to the sandbox", KeyRequest{Mode: ModeLive, AppScopes: app, Linked: true, BoundID: "acct_sb", Bound: &Account{Sandbox: true}}, "invalid_parameter"},
		{"bound to an ended link", KeyRequest{Mode: ModeLive, AppScopes: app, Linked: true, BoundID: "acct_r", Bound: &Account{Revoked: true}}, "invalid_parameter"},
		{"no mode", KeyRequest{Mode: "staging", AppScopes: app}, "invalid_parameter"},
	}
	for _, c := range cases {
		if got := code(CheckKey(c.req)); got != c.code {
			t.Errorf("%s: %q, want %q", c.name, got, c.code)
		}
	}
}

// Rotation: the successor has the old key's settings; the old key works 24
// hours more (or until its own earlier expiry); a revoked or expired key
// cannot be rotated.
func TestKeyRotation(t *testing.T) {
	t.Parallel()
	at := func(d time.Duration) *Time { return &Time{Time: now.Add(d)} }
	grace := now.Add(KeyRotationGraceHours * time.Hour)
	cases := []struct {
		name        string
		key         APIKey
		code        string
		oldExpires  time.Time
		changed     bool
		nextExpires *Time
	}{
		{"no expiry", APIKey{}, "", grace, true, nil},
		{"expires in a year", APIKey{ExpiresAt: at(365 * 24 * time.Hour)}, "", grace, true, at(365 * 24 * time.Hour)},
		{"expires in an hour", APIKey{ExpiresAt: at(time.Hour)}, "", now.Add(time.Hour), false, at(time.Hour)},
		{"expired", APIKey{ExpiresAt: at(-time.Second)}, "invalid_state", time.Time{}, false, nil},
		{"revoked", APIKey{RevokedAt: at(-time.Hour)}, "invalid_state", time.Time{}, false, nil},
	}
	for _, c := range cases {
		old := c.key
		old.ID, old.Name, old.Mode, old.Scopes, old.AccountID = "key_old", "Prod", ModeLive, Scopes{ScopeBillsRead}, "acct_1"
		old.Last4, old.LastUsedAt = "wxyz", at(-time.Minute)
		next, changed, err := old.Rotate("key_new", "svc_live_AbCd", "9876", now)
		if code(err) != c.code {
			t.Fatalf("%s: %v", c.name, err)
		}
		if err != nil {
			continue
		}
		if changed != c.changed || !old.ExpiresAt.Equal(c.oldExpires) {
			t.Errorf("%s: old expires %v (changed %v)", c.name, old.ExpiresAt, changed)
		}
		if next.ID != "key_new" || next.RotatedFrom != "key_old" || next.Name != "Prod" || next.AccountID != "acct_1" ||
			next.Prefix != "svc_live_AbCd" || next.Last4 != "9876" || next.LastUsedAt != nil ||
			!next.CreatedAt.Equal(now) || (next.ExpiresAt == nil) != (c.nextExpires == nil) ||
			(next.ExpiresAt != nil && !next.ExpiresAt.Equal(c.nextExpires.Time)) {
			t.Errorf("%s: successor %+v", c.name, next)
		}
		if !old.Usable(c.oldExpires.Add(-time.Second)) || old.Usable(c.oldExpires) {
			t.Errorf("%s: the old key's last moment", c.name)
		}
	}
}

// Links, plans and resets: only real landlords are linked; unknown plans
// are refused; the free landlord plan has no QR payments; webhook endpoints
// stop at the plan's count; only a sandbox resets.
func TestAccessRules(t *testing.T) {
	t.Parallel()
	if code(CheckLinkable(&Application{}, true)) != "invalid_parameter" || CheckLinkable(&Application{}, false) != nil ||
		code(CheckLinkable(&Application{Disabled: true}, false)) != "application_disabled" {
		t.Error("only real landlords are linked")
	}
	if code(DeveloperPlan("gold").Check()) != "invalid_parameter" || PlanPro.Check() != nil {
		t.Error("developer plans")
	}
	if code(LandlordPlan("gold").Check()) != "invalid_parameter" || LandlordStandard.Check() != nil {
		t.Error("landlord plans")
	}
	if LandlordFree.QRPayments() || !LandlordStandard.QRPayments() || !LandlordPro.QRPayments() {
		t.Error("QR payments come with the paid landlord plans")
	}
	for plan, limit := range map[DeveloperPlan]int{PlanFree: 2, PlanDeveloper: 5, PlanPro: 20, PlanBusiness: 50, PlanEnterprise: 100} {
		if plan.CheckEndpoints(limit-1) != nil || code(plan.CheckEndpoints(limit)) != "plan_limit_reached" {
			t.Errorf("%s: endpoints stop at %d", plan, limit)
		}
	}
	if code((&Account{}).CheckReset()) != "test_mode_only" || (&Account{Sandbox: true}).CheckReset() != nil {
		t.Error("only a sandbox resets")
	}
}

// A new property or room fits while the account holds fewer than its
// capacity: a sandbox's full answer is 429 sandbox_limit (retry the next
// day), a real landlord's 403 plan_limit_reached.
func TestCheckAdd(t *testing.T) {
	t.Parallel()
	sandbox := &Account{Sandbox: true, Plan: LandlordFree}
	free := &Account{Plan: LandlordFree}
	full := free.Capacity()
	for _, c := range []struct {
		name  string
		acct  *Account
		usage Capacity
		prop  string
		room  string
	}{
		{"empty", free, Capacity{}, "", ""},
		{"one short", free, Capacity{Properties: full.Properties - 1, Rooms: full.Rooms - 1}, "", ""},
		{"full", free, full, "plan_limit_reached", "plan_limit_reached"},
		{"rooms full", free, Capacity{Rooms: full.Rooms}, "", "plan_limit_reached"},
		{"sandbox within", sandbox, full, "", ""},
		{"sandbox full", sandbox, SandboxCapacity, "sandbox_limit", "sandbox_limit"},
	} {
		if got := code(c.acct.CheckAddProperty(c.usage)); got != c.prop {
			t.Errorf("%s: property %q, want %q", c.name, got, c.prop)
		}
		if got := code(c.acct.CheckAddRoom(c.usage)); got != c.room {
			t.Errorf("%s: room %q, want %q", c.name, got, c.room)
		}
	}
	if e, _ := AsError(sandbox.CheckAddRoom(SandboxCapacity)); e.Kind != KindRateLimited || e.RetryAfter != 86400 {
		t.Errorf("sandbox full: %+v", e)
	}
	if e, _ := AsError(free.CheckAddProperty(full)); e.Kind != KindForbidden {
		t.Errorf("plan full: %+v", e)
	}
}

// Rooms and properties: one tenant per room, and only a room's tenant
// moves out of it; a room with a tenant or kept
// bills, and a property with rooms, cannot be deleted.
func TestRoomAndPropertyRules(t *testing.T) {
	t.Parallel()
	tenant := "tnt_1"
	empty, lived := &Room{Number: "101"}, &Room{Number: "102", TenantID: &tenant}
	if empty.MoveIn() != nil || code(lived.MoveIn()) != "room_occupied" {
		t.Error("move in")
	}
	if e, _ := AsError(lived.MoveIn()); e.ResourceID != tenant {
		t.Errorf("room_occupied names %q", e.ResourceID)
	}
	if lived.MoveOut() != nil {
		t.Error("a room with a tenant: move out")
	}
	if e, ok := AsError(empty.MoveOut()); !ok || e.Kind != KindNotFound || e.Message != "Room 101 has no tenant." {
		t.Errorf("a room without a tenant: move out %v", empty.MoveOut())
	}
	for _, c := range []struct {
		room *Room
		kept int
		code string
	}{{empty, 0, ""}, {empty, 2, "room_has_bills"}, {lived, 0, "room_occupied"}} {
		if got := code(c.room.Delete(c.kept)); got != c.code {
			t.Errorf("delete %s with %d bills: %q", c.room.Number, c.kept, got)
		}
	}
	if (&Property{}).Delete() != nil || code((&Property{RoomCount: 3}).Delete()) != "property_not_empty" {
		t.Error("delete property")
	}
}

// IDs are told apart from typing mistakes by their shape alone.
func TestValidID(t *testing.T) {
	t.Parallel()
	id := NewID(PrefixDeveloper)
	cases := []struct {
		prefix, id string
		ok         bool
	}{
		{PrefixDeveloper, id, true},
		{PrefixDeveloper, "dev_0123456789abcdefghijklmn", true},
		{PrefixApplication, id, false},
		{PrefixDeveloper, "dev_0123456789abcdefghijklm", false},
		{PrefixDeveloper, "dev_0123456789abcdefghijklmno", false},
		{PrefixDeveloper, "dev_0123456789ABCDEFGHIJKLMN", false},
		{PrefixDeveloper, "dev-0123456789abcdefghijklmn", false},
		{PrefixDeveloper, "0123456789abcdefghijklmn", false},
		{PrefixDeveloper, "dev_", false},
		{PrefixDeveloper, "", false},
		{PrefixAPIKey, "key_0123456789abcdefghijkl_n", false},
	}
	for _, c := range cases {
		if got := ValidID(c.prefix, c.id); got != c.ok {
			t.Errorf("ValidID(%q, %q) = %v, want %v", c.prefix, c.id, got, c.ok)
		}
	}
}

// Ending a link: a live link ends once, an ended one is left as it is, a
// sandbox's is not found.
func TestUnlink(t *testing.T) {
	t.Parallel()
	cases := []struct {
		acct   Account
		change bool
		code   string
	}{
		{Account{ID: "acct_live"}, true, ""},
		{Account{ID: "acct_ended", Revoked: true}, false, ""},
		{Account{ID: "acct_sandbox", Sandbox: true}, false, "resource_not_found"},
	}
	for _, c := range cases {
		change, err := c.acct.Unlink()
		if change != c.change || code(err) != c.code {
			t.Errorf("%s: %v, %v", c.acct.ID, change, err)
		}
	}
}

// Invoice numbers: the shape InvoiceNumber writes, anything else 400.
func TestCheckInvoiceNumber(t *testing.T) {
	t.Parallel()
	for number, ok := range map[string]bool{
		InvoiceNumber(2026, 123): true, "INV-2026-000123": true, "INV-2027-999999": true,
		"INV-2026-00012": false, "INV-26-000123": false, "inv-2026-000123": false, "INV-2026_000123": false,
		"INV-2026-0001234": false, "": false, "INV-ABCD-000123": false,
	} {
		if err := CheckInvoiceNumber(number); (err == nil) != ok || (!ok && code(err) != "invalid_parameter") {
			t.Errorf("%q: %v", number, err)
		}
	}
}

// TestIntersectAllowedKey: a key's scopes, all allowed, are Intersect's
// answer itself (it runs on every request): no copy, and an append to the
// answer leaves them be. Not parallel: AllocsPerRun counts the process's.
func TestIntersectAllowedKey(t *testing.T) {
	key := Scopes{ScopePropertiesRead, ScopeBillsRead, ScopeBillsWrite}
	if n := testing.AllocsPerRun(100, func() { key.Intersect(AllScopes, AllScopes) }); n != 0 {
		t.Errorf("Intersect of a key's own scopes: %v allocations", n)
	}
	if grown := append(key.Intersect(AllScopes), ScopeTenantsRead); &grown[0] == &key[0] {
		t.Error("an append to the answer grew the key's scopes in place")
	}
	if key.String() != "properties:read bills:read bills:write" {
		t.Errorf("an append to the answer changed the key's scopes: %v", key)
	}
}

// TestScopeSets: Intersect and ParseScopes give sets in AllScopes order,
// without duplicates or unknown names, empty (not nil) when nothing is
// shared; the bits of a set fit AllScopes.
func TestScopeSets(t *testing.T) {
	t.Parallel()
	if len(AllScopes) > 32 {
		t.Fatalf("%d scopes do not fit a uint32 mask", len(AllScopes))
	}
	cases := []struct {
		name   string
		s      Scopes
		others []Scopes
		want   string
	}{
		{"reordered and deduplicated", Scopes{ScopeBillsRead, ScopePropertiesRead, ScopeBillsRead}, nil, "properties:read bills:read"},
		{"with one other", Scopes{ScopeWebhooksManage, ScopeBillsRead, ScopeRoomsWrite}, []Scopes{{ScopeRoomsWrite, ScopeWebhooksManage}},
			"rooms:write webhooks:manage"},
		{"with two others", AllScopes, []Scopes{{ScopeBillsRead, ScopeBillsWrite, ScopeTenantsRead}, {ScopeTenantsRead, ScopeBillsWrite}},
			"tenants:read bills:write"},
		{"an unknown name is dropped", Scopes{"bills:delete", ScopeBillsRead}, []Scopes{{"bills:delete", ScopeBillsRead}}, "bills:read"},
		{"nothing shared", Scopes{ScopeBillsRead}, []Scopes{{ScopeBillsWrite}}, ""},
		{"all of s", Scopes{ScopePropertiesRead, ScopeBillsRead}, []Scopes{AllScopes, {ScopeBillsRead, ScopePropertiesRead}}, "properties:read bills:read"},
		{"s nil", nil, []Scopes{AllScopes}, ""},
		{"an empty other", AllScopes, []Scopes{nil}, ""},
	}
	for _, c := range cases {
		got := c.s.Intersect(c.others...)
		if got == nil || got.String() != c.want {
			t.Errorf("%s: %#v, want %q", c.name, got, c.want)
		}
	}
	all, err := ParseScopes("webhooks:manage, properties:read bills:read properties:read")
	if err != nil || all.String() != "properties:read bills:read webhooks:manage" {
		t.Errorf("ParseScopes: %v %v", all, err)
	}
}
