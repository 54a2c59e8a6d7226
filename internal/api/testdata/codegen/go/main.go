// Command month is the README's month for one room, written against the Go
// client that oapi-codegen generates from the OpenAPI document (default
// settings, types and client, into the package client). TestGeneratedClients
// builds and vets it with a freshly generated client, then runs it against
// a test server: a document the generator reads differently (a meter value
// as a float32, a renamed operation or field) fails there.
package main

import (
	"context"
	"fmt"
	"net/http"
	"os"

	"rentapi.test/month/client"
)

func main() {
	if err := month(context.Background(), os.Getenv("RENTAPI_URL"), os.Getenv("RENTAPI_KEY")); err != nil {
		fmt.Fprintln(os.Stderr, "month:", err)
		os.Exit(1)
	}
	fmt.Println("month done")
}

// meterValue is a meter's reading with three decimals, which a client that
// holds meter values as 32-bit floats would send as 98765.43.
const meterValue = 98765.432

func month(ctx context.Context, base, key string) error {
	c, err := client.NewClientWithResponses(base, client.WithRequestEditorFn(func(_ context.Context, r *http.Request) error {
		r.Header.Set("Authorization", "Bearer "+key)
		return nil
	}))
	if err != nil {
		return err
	}
	// An occupied room of the sandbox.
	occupied, one := client.ListRoomsParamsStatusOccupied, client.Limit(1)
	rooms, err := c.ListRoomsWithResponse(ctx, &client.ListRoomsParams{Status: &occupied, Limit: &one})
	if err := expect("list rooms", rooms, err, http.StatusOK); err != nil {
		return err
	}
	if len(rooms.JSON200.Data) == 0 {
		return fmt.Errorf("no occupied room")
	}
	room := rooms.JSON200.Data[0].Id

	// December's reading, then its bill.
	reading, err := c.CreateMeterReadingWithResponse(ctx, &client.CreateMeterReadingParams{}, client.CreateMeterReadingJSONRequestBody{
		RoomId: room, Month: "2026-12",
		Electricity: client.MeterPartInput{Current: meterValue},
		Water:       client.MeterPartInput{Current: 412},
	})
	if err := expect("create reading", reading, err, http.StatusCreated); err != nil {
		return err
	}
	// As a float64 whatever the generated type: a float32 would hold (and
	// send) 98765.43, and compare equal to the constant made a float32.
	if got := float64(reading.JSON201.Data.Electricity.Current); got != meterValue {
		return fmt.Errorf("the reading's electricity is %v, sent %v", got, meterValue)
	}
	created, err := c.CreateBillWithResponse(ctx, &client.CreateBillParams{}, client.CreateBillJSONRequestBody{RoomId: room, Month: "2026-12"})
	if err := expect("create bill", created, err, http.StatusCreated); err != nil {
		return err
	}
	five := client.Limit(5)
	events, err := c.ListEventsWithResponse(ctx, &client.ListEventsParams{Limit: &five})
	if err := expect("list events", events, err, http.StatusOK); err != nil {
		return err
	}

	// The tenant pays: the bill found again, its payment link, read back.
	month := "2026-12"
	bills, err := c.ListBillsWithResponse(ctx, &client.ListBillsParams{RoomId: &room, Month: &month})
	if err := expect("list bills", bills, err, http.StatusOK); err != nil {
		return err
	}
	if len(bills.JSON200.Data) != 1 || bills.JSON200.Data[0].Id != created.JSON201.Data.Id {
		return fmt.Errorf("the room's December bills: %d", len(bills.JSON200.Data))
	}
	bill := bills.JSON200.Data[0]
	link, err := c.CreatePaymentLinkWithResponse(ctx, bill.Id, &client.CreatePaymentLinkParams{})
	if err := expect("payment link", link, err, http.StatusCreated); err != nil {
		return err
	}
	again, err := c.GetPaymentLinkWithResponse(ctx, link.JSON201.Data.Id, &client.GetPaymentLinkParams{})
	if err := expect("read the payment link", again, err, http.StatusOK); err != nil {
		return err
	}
	active := client.ListPaymentLinksParamsActiveTrue
	links, err := c.ListPaymentLinksWithResponse(ctx, &client.ListPaymentLinksParams{BillId: &bill.Id, Active: &active})
	if err := expect("list payment links", links, err, http.StatusOK); err != nil {
		return err
	}
	if again.JSON200.Data.Url != link.JSON201.Data.Url || len(links.JSON200.Data) != 1 {
		return fmt.Errorf("the link read back differs")
	}
	// 1,000.00 baht first, then the rest: the bill is paid.
	part := int64(100000)
	paid, err := c.SimulatePaymentWithResponse(ctx, &client.SimulatePaymentParams{}, client.SimulatePaymentJSONRequestBody{
		BillId: bill.Id, Outcome: client.PaymentSimulationOutcomePaid, AmountPaid: &part})
	if err := expect("pay a part", paid, err, http.StatusOK); err != nil {
		return err
	}
	paid, err = c.SimulatePaymentWithResponse(ctx, &client.SimulatePaymentParams{}, client.SimulatePaymentJSONRequestBody{
		BillId: bill.Id, Outcome: client.PaymentSimulationOutcomePaid})
	if err := expect("pay the rest", paid, err, http.StatusOK); err != nil {
		return err
	}
	final, err := c.GetBillWithResponse(ctx, bill.Id, &client.GetBillParams{})
	if err := expect("get the bill", final, err, http.StatusOK); err != nil {
		return err
	}
	if final.JSON200.Data.Status != client.BillStatusPaid || final.JSON200.Data.AmountPaid != bill.Total {
		return fmt.Errorf("the bill is %s with %d of %d paid", final.JSON200.Data.Status, final.JSON200.Data.AmountPaid, bill.Total)
	}
	return nil
}

// answer is what every generated response has.
type answer interface{ StatusCode() int }

// expect is err, or an error unless the answer has the status.
func expect(what string, res answer, err error, status int) error {
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if got := res.StatusCode(); got != status {
		return fmt.Errorf("%s: status %d, want %d", what, got, status)
	}
	return nil
}
