package api

import (
	"net/http"

	"rentapi/internal/rental"
	"rentapi/internal/store"
)

func position[T any](created func(T) rental.Time, id func(T) string) func(T) store.Position {
	return func(v T) store.Position { return store.Position{CreatedAt: created(v).UnixMilli(), ID: id(v)} }
}

var roomPosition = position(func(r rental.Room) rental.Time { return r.CreatedAt }, func(r rental.Room) string { return r.ID })

func (s *Server) listRooms(c *call) (int, any, error) {
	q := c.params
	var f store.RoomFilter
	var err error
	if f.PropertyID = c.r.PathValue("property_id"); f.PropertyID != "" {
		if _, err := c.q.GetProperty(c.ctx, c.acct(), f.PropertyID); err != nil {
			return 0, nil, err
		}
	} else if f.PropertyID, err = queryID(q, "property_id"); err != nil {
		return 0, nil, err
	}
	if f.Status, err = queryEnum(q, "status", rental.RoomStatuses...); err != nil {
		return 0, nil, err
	}
	p, err := s.newPager(c, "property_id", "status")
	if err != nil {
		return 0, nil, err
	}
	items, more, err := c.q.ListRooms(c.ctx, c.acct(), f, p.page)
	return listed(s, p, roomPosition, items, more, err)
}

func (s *Server) getRoom(c *call) (int, any, error) {
	return found(c.q.GetRoom(c.ctx, c.acct(), c.r.PathValue("room_id")))
}

func roomChange(body []byte, allowed ...string) (rental.RoomChange, error) {
	var ch rental.RoomChange
	f, err := parseObject(body, allowed...)
	if err != nil {
		return ch, err
	}
	return ch, read(
		into(&ch.Number, f.string, "number"),
		into(&ch.Floor, f.int, "floor"),
		into(&ch.MonthlyRent, f.int, "monthly_rent"),
		into(&ch.Status, f.string, "status"),
	)
}

func (s *Server) createRoom(c *call) (int, any, error) {
	ch, err := roomChange(c.body, "number", "floor", "monthly_rent", "status")
	if err != nil {
		return 0, nil, err
	}
	r, err := rental.NewRoom(c.r.PathValue("property_id"), ch)
	if err != nil {
		return 0, nil, err
	}
	created, err := c.tx.CreateRoom(c.ctx, c.acct(), r)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, data{created}, nil
}

func (s *Server) updateRoom(c *call) (int, any, error) {
	ch, err := roomChange(c.body, "floor", "monthly_rent", "status")
	if err != nil {
		return 0, nil, err
	}
	r, err := c.tx.UpdateRoom(c.ctx, c.acct(), c.r.PathValue("room_id"), ch)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, data{r}, nil
}

func (s *Server) deleteRoom(c *call) (int, any, error) {
	if _, err := parseObject(c.body); err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, c.tx.DeleteRoom(c.ctx, c.acct(), c.r.PathValue("room_id"))
}
