package api

import (
	"net/http"

	"rentapi/internal/rental"
)

var propertyPosition = position(func(p rental.Property) rental.Time { return p.CreatedAt }, func(p rental.Property) string { return p.ID })

func (s *Server) listProperties(c *call) (int, any, error) {
	p, err := s.newPager(c)
	if err != nil {
		return 0, nil, err
	}
	items, more, err := c.q.ListProperties(c.ctx, c.acct(), p.page)
	return listed(s, p, propertyPosition, items, more, err)
}

func (s *Server) getProperty(c *call) (int, any, error) {
	return found(c.q.GetProperty(c.ctx, c.acct(), c.r.PathValue("property_id")))
}

// propertyChange decodes a property create or update body.
func propertyChange(body []byte) (rental.PropertyChange, error) {
	var ch rental.PropertyChange
	f, err := parseObject(body, "name", "address", "electricity_rate", "water_billing", "water_rate", "water_flat_amount", "due_day", "reminders", "late_fee", "proration")
	if err != nil {
		return ch, err
	}
	return ch, read(
		into(&ch.Name, f.string, "name"),
		into(&ch.Address, f.string, "address"),
		into(&ch.ElectricityRate, f.int, "electricity_rate"),
		into(&ch.WaterBilling, f.string, "water_billing"),
		into(&ch.WaterRate, f.int, "water_rate"),
		into(&ch.WaterFlatAmount, f.int, "water_flat_amount"),
		into(&ch.DueDay, f.int, "due_day"),
		into(&ch.Reminders, f.reminders, "reminders"),
		into(&ch.LateFee, f.lateFee, "late_fee"),
		into(&ch.Proration, f.string, "proration"),
	)
}

// lateFee decodes a property's late_fee: an object, or null to remove the
// rule.
func (f fields) lateFee(name string) (rental.Optional[rental.LateFeeChange], error) {
	var out rental.Optional[rental.LateFeeChange]
	if _, set, null := f.raw(name); !set || null {
		out.Set, out.Null = set, null
		return out, nil
	}
	sub, set, err := f.object(name, "amount", "per", "grace_days", "max_amount")
	out.Set = set
	if err != nil {
		return out, err
	}
	c := &out.Value
	return out, read(
		into(&c.Amount, sub.int, "amount"),
		into(&c.Per, sub.string, "per"),
		into(&c.GraceDays, sub.int, "grace_days"),
		into(&c.MaxAmount, sub.int, "max_amount"),
	)
}

// reminders reads a property's reminders: null, or an object of two
// lists of days.
func (f fields) reminders(name string) (rental.Optional[rental.ReminderChange], error) {
	var out rental.Optional[rental.ReminderChange]
	_, out.Set, out.Null = f.raw(name)
	if !out.Set || out.Null {
		return out, nil
	}
	sub, _, err := f.object(name, "before_due_days", "after_due_days")
	if err != nil {
		return out, err
	}
	return out, read(into(&out.Value.BeforeDueDays, sub.ints, "before_due_days"), into(&out.Value.AfterDueDays, sub.ints, "after_due_days"))
}

func (s *Server) createProperty(c *call) (int, any, error) {
	ch, err := propertyChange(c.body)
	if err != nil {
		return 0, nil, err
	}
	p, err := rental.NewProperty(ch)
	if err != nil {
		return 0, nil, err
	}
	created, err := c.tx.CreateProperty(c.ctx, c.acct(), p)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, data{created}, nil
}

func (s *Server) updateProperty(c *call) (int, any, error) {
	ch, err := propertyChange(c.body)
	if err != nil {
		return 0, nil, err
	}
	p, err := c.tx.UpdateProperty(c.ctx, c.acct(), c.r.PathValue("property_id"), ch)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, data{p}, nil
}

func (s *Server) deleteProperty(c *call) (int, any, error) {
	if _, err := parseObject(c.body); err != nil {
		return 0, nil, err
	}
	if err := c.tx.DeleteProperty(c.ctx, c.acct(), c.r.PathValue("property_id")); err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, nil
}
