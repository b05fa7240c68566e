// Package web serves the café menu.
package web

import (
	"fmt"
	"net/http"
)

// Server answers HTTP requests.
type Server struct {
	Addr string
}

// Handler handles one request.
type Handler interface {
	Serve(w http.ResponseWriter, r *http.Request)
}

// Handle writes a greeting — in français.
func (s *Server) Handle(w http.ResponseWriter, r *http.Request) {
	fmt.Fprintf(w, "bonjour %s", r.URL.Path)
}

// NewServer builds a server.
func NewServer(addr string) *Server {
	return &Server{Addr: addr}
}
