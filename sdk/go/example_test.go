package rentapi_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"time"

	rentapi "rentapi/sdk/go"
)

// The README's month with the Go SDK: a property and a room with its
// tenant, the month's reading, an internet charge and a long-stay
// discount, the bill, its payment link, and the tenant paying in two
// transfers (in the sandbox the test helper plays the bank).
func Example_month() {
	ctx := context.Background()
	c := rentapi.NewClient(os.Getenv("RENTAPI_KEY"), rentapi.WithBaseURL(os.Getenv("RENTAPI_BASE_URL")))

	prop, err := c.CreateProperty(ctx, &rentapi.PropertyCreate{
		Name:            "Baan Suk Dormitory",
		Address:         rentapi.Ptr("99 Soi Sukhumvit 71, Bangkok"),
		ElectricityRate: 800,                      // satang a kWh
		WaterRate:       rentapi.Ptr(int64(1800)), // satang a cubic metre
		DueDay:          rentapi.Ptr(5),
	})
	if err != nil {
		log.Fatal(err)
	}
	room, err := c.CreateRoom(ctx, prop.ID, &rentapi.RoomCreate{Number: "101", MonthlyRent: 350000})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := c.MoveInTenant(ctx, room.ID, &rentapi.TenantCreate{Name: "Somchai Jaidee", Phone: "0812345678"}); err != nil {
		log.Fatal(err)
	}

	// This month in Thailand, the month a reading and a bill are for.
	month := time.Now().In(time.FixedZone("ICT", 7*3600)).Format("2006-01")
	if _, err := c.CreateMeterReading(ctx, &rentapi.MeterReadingCreate{
		RoomID:      room.ID,
		Month:       month,
		Electricity: rentapi.MeterPartInput{Previous: rentapi.Ptr(2400.5), Current: 2450.5},
		Water:       rentapi.MeterPartInput{Previous: rentapi.Ptr(400.0), Current: 412},
	}); err != nil {
		log.Fatal(err)
	}
	for _, charge := range []*rentapi.ChargeCreate{
		{Description: "Internet", Amount: 30000, Recurring: rentapi.Ptr(true), Month: month},
		{Type: rentapi.Ptr(rentapi.ChargeTypeDiscount), Description: "Long-stay discount", Amount: 50000, Month: month},
	} {
		if _, err := c.CreateCharge(ctx, room.ID, charge); err != nil {
			log.Fatal(err)
		}
	}

	bill, err := c.CreateBill(ctx, &rentapi.BillCreate{RoomID: room.ID, Month: month})
	if err != nil {
		log.Fatal(err)
	}
	for _, l := range bill.Lines {
		fmt.Printf("%-12s %-20s %9.2f\n", l.Type, l.Description, float64(l.Amount)/100)
	}
	fmt.Printf("%-33s %9.2f baht, %s\n", "total", float64(bill.Total)/100, bill.Status)

	if _, err := c.CreatePaymentLink(ctx, bill.ID); err != nil {
		log.Fatal(err)
	}
	for _, paid := range []*int64{rentapi.Ptr(int64(100000)), nil} { // 1,000 baht, then the rest
		if _, err := c.SimulatePayment(ctx, &rentapi.PaymentSimulation{BillID: bill.ID, Outcome: rentapi.PaymentSimulationOutcomePaid, AmountPaid: paid}); err != nil {
			log.Fatal(err)
		}
	}
	bill, err = c.GetBill(ctx, bill.ID)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s: %.2f baht paid, receipt %t\n", bill.Status, float64(bill.AmountPaid)/100, bill.Receipt != nil)
	// Output:
	// rent         Rent                   3500.00
	// electricity  Electricity             400.00
	// water        Water                   216.00
	// charge       Internet                300.00
	// discount     Long-stay discount     -500.00
	// total                               3916.00 baht, issued
	// paid: 3916.00 baht paid, receipt true
}

// Lists are iterators: a loop asks for the next page only when it reaches
// it, and stops at the first error.
func ExampleClient_ListRooms() {
	ctx := context.Background()
	c := rentapi.NewClient(os.Getenv("RENTAPI_KEY"), rentapi.WithBaseURL(os.Getenv("RENTAPI_BASE_URL")))
	occupied := 0
	for room, err := range c.ListRooms(ctx, &rentapi.ListRoomsParams{Status: rentapi.RoomStatusOccupied, Limit: 2}) {
		if err != nil {
			log.Fatal(err)
		}
		if room.Status == rentapi.RoomStatusOccupied {
			occupied++
		}
	}
	fmt.Println(occupied > 0)
	// Output: true
}

// An error answer is an *Error: branch on its Code, and quote its
// RequestID when asking for help.
func ExampleError() {
	ctx := context.Background()
	c := rentapi.NewClient(os.Getenv("RENTAPI_KEY"), rentapi.WithBaseURL(os.Getenv("RENTAPI_BASE_URL")))
	_, err := c.GetBill(ctx, "bill_doesnotexist")
	var apiErr *rentapi.Error
	if errors.As(err, &apiErr) {
		fmt.Println(apiErr.StatusCode, apiErr.Code, apiErr.RequestID != "")
	}
	// Output: 404 resource_not_found true
}
