package api

import (
	"net/http"

	"rentapi/internal/rental"
)

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

// accountView is the account object: the landlord as this request reaches
// it, with plan, features, limits, usage and the scopes this key can use.
type accountView struct {
	ID        string          `json:"id"`
	Object    string          `json:"object"`
	Name      string          `json:"name"`
	Plan      string          `json:"plan"`
	Features  accountFeatures `json:"features"`
	Limits    rental.Capacity `json:"limits"`
	Usage     rental.Capacity `json:"usage"`
	Scopes    rental.Scopes   `json:"scopes"`
	Livemode  bool            `json:"livemode"`
	CreatedAt rental.Time     `json:"created_at"`
	UpdatedAt rental.Time     `json:"updated_at"`
}

type accountFeatures struct {
	QRPayments bool `json:"qr_payments"`
}

func (s *Server) getAccount(c *call) (int, any, error) {
	a := c.acct()
	usage, err := c.q.Usage(c.ctx, a)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, data{accountView{
		ID: a.ID, Object: "account", Name: a.Name, Plan: string(a.Plan), Features: accountFeatures{QRPayments: a.QRPayments},
		Limits: a.Capacity(), Usage: usage, Scopes: c.caller.scopes, Livemode: a.Mode() == rental.ModeLive,
		CreatedAt: a.CreatedAt, UpdatedAt: a.UpdatedAt,
	}}, nil
}
