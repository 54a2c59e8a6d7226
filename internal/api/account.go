package api

import "net/http"

// data is the envelope of every single-object response.
type data struct {
	Data any `json:"data"`
}

// found renders a retrieved object, or the error that it is not there.
func found[T any](v *T, err error) (int, any, error) {
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, data{v}, nil
}

func (s *Server) getAccount(c *call) (int, any, error) {
	a := c.acct()
	usage, err := c.q.Usage(c.ctx, a)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, data{a.Object(usage, c.caller.scopes)}, nil
}
