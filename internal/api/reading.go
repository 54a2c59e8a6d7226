package api

import (
	"net/http"
	"slices"

	"rentapi/internal/rental"
	"rentapi/internal/request"
	"rentapi/internal/store"
)

var (
	meterPosition   = position(func(m rental.Meter) rental.Time { return m.CreatedAt }, func(m rental.Meter) string { return m.ID })
	readingPosition = position(func(r rental.Reading) rental.Time { return r.CreatedAt }, func(r rental.Reading) string { return r.ID })
)

func (s *Server) listMeters(c *call) (int, any, error) {
	q := c.params
	var f store.MeterFilter
	var err error
	if f.PropertyID, err = queryID(q, "property_id"); err != nil {
		return 0, nil, err
	}
	if f.RoomID, err = queryID(q, "room_id"); err != nil {
		return 0, nil, err
	}
	if f.Kind, err = queryEnum(q, "kind", rental.MeterElectricity, rental.MeterWater); err != nil {
		return 0, nil, err
	}
	p, err := s.newPager(c, "property_id", "room_id", "kind")
	if err != nil {
		return 0, nil, err
	}
	items, more, err := c.q.ListMeters(c.ctx, c.acct(), f, p.page)
	return listed(s, p, meterPosition, items, more, err)
}

func (s *Server) getMeter(c *call) (int, any, error) {
	return found(c.q.GetMeter(c.ctx, c.acct(), c.r.PathValue("meter_id")))
}

// partInput decodes one meter's part of a reading body.
func partInput(f fields, name string, required bool) (rental.PartInput, error) {
	part, set, err := f.object(name, "current", "previous", "rollover")
	in := rental.PartInput{Set: set}
	if err != nil {
		return in, err
	}
	if !set && required {
		return in, rental.Missing(f.prefix + name)
	}
	return in, read(
		into(&in.Current, part.quantity, "current"),
		into(&in.Previous, part.quantity, "previous"),
		into(&in.Rollover, part.bool, "rollover"),
	)
}

// readingFields are the fields of a reading's create body.
var readingFields = []string{"room_id", "month", "electricity", "water"}

// readingInput decodes a reading's create body: a request's, or an item
// of a batch's, which is judged as if it were a request of its own.
func readingInput(f fields) (store.ReadingInput, error) {
	var in store.ReadingInput
	var err error
	if in.RoomID, err = requiredID(f, "room_id", "room"); err != nil {
		return in, err
	}
	month, err := required(f, "month")
	if err != nil {
		return in, err
	}
	if in.Month, err = rental.ParseMonth("month", month); err != nil {
		return in, err
	}
	if in.Electricity, err = partInput(f, "electricity", true); err != nil {
		return in, err
	}
	in.Water, err = partInput(f, "water", true)
	return in, err
}

// decodeReading decodes POST /v1/meter-readings's body, before the
// transaction (see prepareFunc).
func decodeReading(c *call) (store.ReadingInput, error) {
	f, err := parseObject(c.body, readingFields...)
	if err != nil {
		return store.ReadingInput{}, err
	}
	return readingInput(f)
}

func (s *Server) createReading(c *call, in store.ReadingInput) (int, any, error) {
	r, err := c.tx.CreateReading(c.ctx, c.acct(), in)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, data{r}, nil
}

// batchResult is one item's outcome in a batch's answer: the status, and
// the reading or the error, that the item alone would have had.
type batchResult struct {
	Index   int             `json:"index"`
	Status  int             `json:"status"`
	Reading *rental.Reading `json:"reading"`
	Error   *errorDetail    `json:"error"`
}

// refused sets the result of an item refused with err, a rental.Error.
func (s *Server) refused(c *call, res *batchResult, err error) {
	res.Status = request.StatusOf(err)
	if e, ok := rental.AsError(err); ok {
		res.Error = s.errorDetail(c.ctx, e)
	}
}

// readingBatch is a batch of readings as its body decodes: each item's
// result so far (its refusal when it did not decode), and the inputs of
// the others, with the index of each.
type readingBatch struct {
	out    []batchResult
	inputs []store.ReadingInput
	at     []int
}

// decodeReadings decodes POST /v1/meter-readings/batch's body before the
// transaction (see prepareFunc), each item as if posted alone; the batch
// is refused as a whole only for its own shape.
func (s *Server) decodeReadings(c *call) (readingBatch, error) {
	var b readingBatch
	f, err := parseObject(c.body, "readings")
	if err != nil {
		return b, err
	}
	raw, set, null := f.raw("readings")
	if !set || null {
		return b, rental.Missing("readings")
	}
	items, array := elements(raw)
	if err := rental.CheckReadingBatch(array, len(items)); err != nil {
		return b, err
	}
	b.out = make([]batchResult, len(items))
	for i, item := range items {
		b.out[i].Index = i
		f, err := parseItem(item, "readings", readingFields...)
		if err != nil {
			s.refused(c, &b.out[i], err)
			continue
		}
		in, err := readingInput(f)
		if err != nil {
			s.refused(c, &b.out[i], err)
			continue
		}
		b.inputs, b.at = append(b.inputs, in), append(b.at, i)
	}
	return b, nil
}

// createReadings records a batch's decoded items, each judged as if
// posted alone. The decoded batch is left as it is, for a run again.
func (s *Server) createReadings(c *call, b readingBatch) (int, any, error) {
	results, err := c.tx.CreateReadings(c.ctx, c.acct(), b.inputs)
	if err != nil {
		return 0, nil, err
	}
	out := slices.Clone(b.out)
	for k, r := range results {
		res := &out[b.at[k]]
		if r.Err != nil {
			s.refused(c, res, r.Err)
			continue
		}
		res.Status, res.Reading = http.StatusCreated, r.Reading
	}
	return http.StatusOK, data{out}, nil
}

func (s *Server) correctReading(c *call) (int, any, error) {
	f, err := parseObject(c.body, "electricity", "water")
	if err != nil {
		return 0, nil, err
	}
	e, err := partInput(f, "electricity", false)
	if err != nil {
		return 0, nil, err
	}
	w, err := partInput(f, "water", false)
	if err != nil {
		return 0, nil, err
	}
	r, err := c.tx.CorrectReading(c.ctx, c.acct(), c.r.PathValue("reading_id"), e, w)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, data{r}, nil
}

func (s *Server) getReading(c *call) (int, any, error) {
	return found(c.q.GetReading(c.ctx, c.acct(), c.r.PathValue("reading_id")))
}

// monthFilter reads month, from_month and to_month.
func monthFilter(c *call) (store.MonthFilter, error) {
	q := c.params
	var f store.MonthFilter
	var err error
	if f.Month, err = queryMonth(q, "month"); err != nil {
		return f, err
	}
	if f.From, err = queryMonth(q, "from_month"); err != nil {
		return f, err
	}
	f.To, err = queryMonth(q, "to_month")
	return f, err
}

func (s *Server) listReadings(c *call) (int, any, error) {
	q := c.params
	var f store.ReadingFilter
	var err error
	if f.PropertyID, err = queryID(q, "property_id"); err != nil {
		return 0, nil, err
	}
	if f.RoomID, err = queryID(q, "room_id"); err != nil {
		return 0, nil, err
	}
	if f.MonthFilter, err = monthFilter(c); err != nil {
		return 0, nil, err
	}
	if f.Flagged, err = queryBool(q, "flagged"); err != nil {
		return 0, nil, err
	}
	p, err := s.newPager(c, "property_id", "room_id", "month", "from_month", "to_month", "flagged")
	if err != nil {
		return 0, nil, err
	}
	items, more, err := c.q.ListReadings(c.ctx, c.acct(), f, p.page)
	return listed(s, p, readingPosition, items, more, err)
}
