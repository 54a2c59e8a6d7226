package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"rentapi/internal/promptpay"
	"rentapi/internal/rental"
	"rentapi/internal/store"
	"rentapi/internal/store/storetest"
)

// addProperty gives the account a property with rooms, as an application
// would.
func (env *connectEnv) addProperty(acct *rental.Account, name string, rooms int) string {
	env.t.Helper()
	ctx := env.t.Context()
	p, err := rental.NewProperty(rental.PropertyChange{Name: rental.Of(name), ElectricityRate: rental.Of[int64](800), WaterRate: rental.Of[int64](1800)})
	if err != nil {
		env.t.Fatal(err)
	}
	var id string
	err = env.e.DB.InTx(ctx, func(tx *store.Tx) error {
		prop, err := tx.CreateProperty(ctx, acct, p)
		if err != nil {
			return err
		}
		id = prop.ID
		for i := range rooms {
			if _, err := tx.CreateRoom(ctx, acct, rental.Room{PropertyID: prop.ID, Number: string(rune('A'+i)) + "1", MonthlyRent: 350000, Status: "vacant"}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		env.t.Fatal(err)
	}
	return id
}

// qrPayments is features.qr_payments and the plan of GET /v1/account.
func (env *connectEnv) qrPayments(key string) (bool, string) {
	env.t.Helper()
	status, data, code := env.apiGet(key, "/v1/account")
	if status != http.StatusOK {
		env.t.Fatalf("GET /v1/account: %d %s", status, code)
	}
	return data["features"].(map[string]any)["qr_payments"].(bool), data["plan"].(string)
}

// A landlord signs up on the free plan and keeps the account in /app: the
// name, the plan with its limits and the counts of properties and rooms;
// a plan change (refused, saying why, when the data does not fit), which
// the API shows at once, QR payments following the plan; the PromptPay
// receiver (a wrong one is the form again with what to fix); and the
// connected applications, each disconnected after a confirmation, after
// which the application's keys get 403 account_access_revoked and the data
// stays.
func TestLandlordApp(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		env := newConnectEnv(t, e, rental.AllScopes)
		if p := newBrowser(t, env.hs.URL, nil).get("/app"); p.status != http.StatusSeeOther || p.location != "/app/signin?next=%2Fapp" {
			t.Fatalf("signed out: %d %q", p.status, p.location)
		}
		b := env.landlord("หอพักบ้านสุข Baan Suk", "baansuk@example.com")
		home := b.get("/app")
		for _, want := range []string{"หอพักบ้านสุข Baan Suk", "<strong>ฟรี</strong>", "<strong>0</strong> / 1", "<strong>0</strong> / 30", "ยังไม่ได้ตั้งค่า", "No application is connected"} {
			if !strings.Contains(home.body, want) {
				t.Errorf("/app does not say %q", want)
			}
		}

		acctID := env.approve(b, "landlord-app-state")
		acct := env.account(acctID)
		key := env.liveKey(acctID, rental.AllScopes)
		if qr, plan := env.qrPayments(key); qr || plan != "free" {
			t.Fatalf("free: qr_payments %v, plan %s", qr, plan)
		}

		// Plans: standard turns QR payments on; the data decides how low it
		// can go.
		if p := b.post("/app/plan", url.Values{"plan": {"standard"}}); p.status != http.StatusSeeOther || p.location != "/app?done=plan" {
			t.Fatalf("standard: %d %q %s", p.status, p.location, p.body)
		}
		if qr, plan := env.qrPayments(key); !qr || plan != "standard" {
			t.Fatalf("standard: qr_payments %v, plan %s", qr, plan)
		}
		acct = env.account(acctID)
		first := env.addProperty(acct, "Baan Suk 1", 3)
		env.addProperty(acct, "Baan Suk 2", 2)
		home = b.get("/app?done=plan")
		for _, want := range []string{"The plan is changed.", "<strong>มาตรฐาน</strong>", "<strong>2</strong> / 10", "<strong>5</strong> / 300", "หอพัก 500 แห่ง · ห้อง 20,000 ห้อง"} {
			if !strings.Contains(home.body, want) {
				t.Errorf("/app does not say %q", want)
			}
		}
		tooSmall := b.post("/app/plan", url.Values{"plan": {"free"}})
		if tooSmall.status != http.StatusConflict || !strings.Contains(tooSmall.body, "2 properties (it allows 1)") || !strings.Contains(tooSmall.body, "แพ็กเกจนี้รองรับ") {
			t.Fatalf("free with two properties: %d %s", tooSmall.status, tooSmall.body)
		}
		if p := b.post("/app/plan", url.Values{"plan": {"platinum"}}); p.status != http.StatusBadRequest || !strings.Contains(p.body, "Unknown landlord plan") {
			t.Fatalf("unknown plan: %d", p.status)
		}
		if qr, plan := env.qrPayments(key); !qr || plan != "standard" {
			t.Fatalf("a refused change changed the plan: %v %s", qr, plan)
		}
		req, _ := http.NewRequest("DELETE", env.hs.URL+"/v1/properties/"+first, nil)
		req.Header.Set("Authorization", "Bearer "+key)
		if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusConflict {
			t.Fatalf("delete a property with rooms: %v %v", resp.StatusCode, err)
		}
		ctx := t.Context()
		err := e.DB.InTx(ctx, func(tx *store.Tx) error {
			rooms, _, err := tx.ListRooms(ctx, acct, store.RoomFilter{PropertyID: first}, store.Page{Limit: 10})
			for _, r := range rooms {
				if err == nil {
					err = tx.DeleteRoom(ctx, acct, r.ID)
				}
			}
			if err != nil {
				return err
			}
			return tx.DeleteProperty(ctx, acct, first)
		})
		if err != nil {
			t.Fatal(err)
		}
		if p := b.post("/app/plan", url.Values{"plan": {"free"}}); p.status != http.StatusSeeOther {
			t.Fatalf("free with one property: %d %s", p.status, p.body)
		}
		if qr, plan := env.qrPayments(key); qr || plan != "free" {
			t.Fatalf("back on free: qr_payments %v, plan %s", qr, plan)
		}

		// PromptPay: wrong input is the form again, as typed, saying what
		// to fix; a biller keeps its Ref2; a mobile number is normalised.
		bad := b.post("/app/promptpay", url.Values{"kind": {"mobile"}, "id": {"12345"}, "name": {"สมชาย ใจดี"}})
		if bad.status != http.StatusBadRequest || !strings.Contains(bad.body, "ตรวจสอบหมายเลขพร้อมเพย์อีกครั้ง · Mobile number must be 10 digits") ||
			!strings.Contains(bad.body, `name="id" value="12345"`) || !strings.Contains(bad.body, `<option value="mobile" selected>`) {
			t.Fatalf("bad mobile: %d %s", bad.status, bad.body)
		}
		if p := b.post("/app/promptpay", url.Values{"kind": {"biller"}, "id": {"01055"}, "name": {"Baan Suk Co."}}); p.status != http.StatusBadRequest || !strings.Contains(p.body, "Biller ID must be") {
			t.Fatalf("short biller: %d", p.status)
		}
		if p := b.post("/app/promptpay", url.Values{"kind": {"bank"}, "id": {"0812345678"}, "name": {"สมชาย ใจดี"}}); p.status != http.StatusBadRequest || !strings.Contains(p.body, "เลือกประเภทบัญชีพร้อมเพย์") {
			t.Fatalf("unknown kind: %d", p.status)
		}
		if p := b.post("/app/promptpay", url.Values{"kind": {"biller"}, "id": {"010553300012345"}, "ref2": {"room-a1"}, "name": {"Baan Suk Co."}}); p.status != http.StatusBadRequest || !strings.Contains(p.body, "Ref2") {
			t.Fatalf("Ref2 with a dash: %d", p.status)
		}
		if p := b.post("/app/promptpay", url.Values{"kind": {"biller"}, "id": {"010553300012345"}, "ref2": {"roomA1"}, "name": {"Baan Suk Co."}}); p.status != http.StatusSeeOther || p.location != "/app?done=promptpay" {
			t.Fatalf("biller: %d %s", p.status, p.body)
		}
		if l, err := e.DB.Read().Landlord(ctx, acct.LandlordID); err != nil || l.Receiver.Kind != "biller" || l.Receiver.ID != "010553300012345" || l.Receiver.Ref2 != "ROOMA1" {
			t.Fatalf("biller receiver %+v (%v)", l.Receiver, err)
		}
		if p := b.post("/app/promptpay", url.Values{"kind": {"mobile"}, "id": {"+66 81 234 5678"}, "ref2": {"LEFTOVER"}, "name": {"สมชาย ใจดี"}}); p.status != http.StatusSeeOther {
			t.Fatalf("mobile: %d %s", p.status, p.body)
		}
		home = b.get("/app?done=promptpay")
		if !strings.Contains(home.body, "<code>0812345678</code>") || !strings.Contains(home.body, "The PromptPay receiver is saved.") || strings.Contains(home.body, "LEFTOVER") {
			t.Fatalf("receiver not shown:\n%s", home.body)
		}

		// Connected applications: listed with their scopes in plain words;
		// a disconnection is confirmed first, cannot reach another
		// landlord's account, and refuses the application's keys from the
		// next request on, keeping the data.
		for _, want := range []string{"Baan Books", "Baan Books Co., Ltd.", "Send bill notices and chat messages to tenants", "/app/connections/" + acctID + "/disconnect"} {
			if !strings.Contains(home.body, want) {
				t.Errorf("/app does not say %q", want)
			}
		}
		confirm := b.get("/app/connections/" + acctID + "/disconnect")
		if confirm.status != http.StatusOK || !strings.Contains(confirm.body, "Disconnect Baan Books?") || !strings.Contains(confirm.body, `method="post" action="/app/connections/`+acctID+`/disconnect"`) {
			t.Fatalf("confirmation: %d %s", confirm.status, confirm.body)
		}
		stranger := env.landlord("Somsak", "somsak@example.com")
		if p := stranger.post("/app/connections/"+acctID+"/disconnect", url.Values{}); p.status != http.StatusNotFound {
			t.Fatalf("another landlord disconnected it: %d", p.status)
		}
		if p := b.do("POST", "/app/connections/"+acctID+"/disconnect", url.Values{}, "https://evil.example"); p.status != http.StatusForbidden {
			t.Fatalf("cross-site disconnect: %d", p.status)
		}
		if status, _, _ := env.apiGet(key, "/v1/properties"); status != http.StatusOK {
			t.Fatalf("before disconnecting: %d", status)
		}
		if p := b.post("/app/connections/"+acctID+"/disconnect", url.Values{}); p.status != http.StatusSeeOther || p.location != "/app?done=disconnected" {
			t.Fatalf("disconnect: %d %q", p.status, p.location)
		}
		for _, path := range []string{"/v1/properties", "/v1/account"} {
			if status, _, code := env.apiGet(key, path); status != http.StatusForbidden || code != "account_access_revoked" {
				t.Fatalf("%s after disconnecting: %d %s", path, status, code)
			}
		}
		home = b.get("/app?done=disconnected")
		if !strings.Contains(home.body, "Your data is kept.") || !strings.Contains(home.body, "No application is connected") || !strings.Contains(home.body, "<strong>1</strong> / 1") {
			t.Fatalf("after disconnecting:\n%s", home.body)
		}
		if p := b.post("/app/connections/"+acctID+"/disconnect", url.Values{}); p.status != http.StatusNotFound {
			t.Fatalf("disconnected twice: %d", p.status)
		}
		if p := b.get("/app?done=%3Cscript%3E"); strings.Contains(p.body, "<script>") || strings.Contains(p.body, `class="flash"`) {
			t.Fatal("the address made the page say something")
		}
	})
}

// The landlord gives the PromptPay account holder's name beside the
// number in /app: it is required (the form comes back, as typed, saying
// so), kept, and shown; a name that is no one-line text is refused the
// same way, never a 500. A receiver saved before names were asked for is
// flagged until it is saved again.
func TestLandlordPromptPayName(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		ctx := t.Context()
		env := newConnectEnv(t, e, rental.Scopes{rental.ScopePropertiesRead})
		b := env.landlord("Somchai", "somchai@example.com")
		p, _, err := e.DB.Read().PersonByEmail(ctx, rental.PersonLandlord, "somchai@example.com")
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"", "   ", "Som\nchai", "Som\u202echai", strings.Repeat("ก", rental.MaxNameLen+1)} {
			bad := b.post("/app/promptpay", url.Values{"kind": {"mobile"}, "id": {"081-234-5678"}, "name": {name}})
			if bad.status != http.StatusBadRequest || !strings.Contains(bad.body, "ใส่ชื่อเจ้าของบัญชีพร้อมเพย์") || !strings.Contains(bad.body, "The account holder&#39;s name") ||
				!strings.Contains(bad.body, `name="id" value="081-234-5678"`) {
				t.Fatalf("name %q: %d\n%s", name, bad.status, bad.body)
			}
		}
		if l, err := e.DB.Read().Landlord(ctx, p.LandlordID); err != nil || l.Receiver != nil || l.ReceiverName != "" {
			t.Fatalf("a refused form saved %+v (%v)", l, err)
		}
		// A receiver from before (the admin tool sets none): flagged.
		err = e.DB.InTx(ctx, func(tx *store.Tx) error {
			_, err := tx.SetPromptPay(ctx, p.LandlordID, promptpay.Receiver{Kind: promptpay.Mobile, ID: "0812345678"}, "")
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if home := b.get("/app"); !strings.Contains(home.body, "No account holder's name yet") {
			t.Fatalf("a receiver without a name is not flagged:\n%s", home.body)
		}
		ok := b.post("/app/promptpay", url.Values{"kind": {"mobile"}, "id": {"081-234-5678"}, "name": {"  สมชาย ใจดี  "}})
		if ok.status != http.StatusSeeOther || ok.location != "/app?done=promptpay" {
			t.Fatalf("with a name: %d %s", ok.status, ok.body)
		}
		if l, err := e.DB.Read().Landlord(ctx, p.LandlordID); err != nil || l.ReceiverName != "สมชาย ใจดี" || l.Receiver.ID != "0812345678" {
			t.Fatalf("saved %+v (%v)", l, err)
		}
		home := b.get("/app?done=promptpay")
		if !strings.Contains(home.body, `<strong id="receiver-name">สมชาย ใจดี</strong>`) || !strings.Contains(home.body, `name="name" value="สมชาย ใจดี"`) ||
			strings.Contains(home.body, "No account holder") {
			t.Fatalf("the name is not shown:\n%s", home.body)
		}
	})
}
