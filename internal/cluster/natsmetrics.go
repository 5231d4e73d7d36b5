package cluster

import (
	"github.com/nats-io/nats-server/v2/server"
	"github.com/prometheus/client_golang/prometheus"
)

// NATSCollectors are the embedded NATS server's traffic counters as read
// by its own statistics: messages and bytes in and out over every client
// (what the server received and what it delivered), consumers cut off,
// and the clients connected. The numbers are read at each scrape. (It
// counts no producer held up: Embed turns that off.)
func NATSCollectors(s *server.Server) []prometheus.Collector {
	varz := func() *server.Varz {
		v, err := s.Varz(nil)
		if err != nil || v == nil {
			return &server.Varz{}
		}
		return v
	}
	counter := func(name, help string, f func(*server.Varz) int64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help},
			func() float64 { return float64(f(varz())) })
	}
	return []prometheus.Collector{
		counter("snaked_nats_in_msgs_total", "Messages the embedded NATS received from its clients.", func(v *server.Varz) int64 { return v.InMsgs }),
		counter("snaked_nats_out_msgs_total", "Messages the embedded NATS delivered to its clients.", func(v *server.Varz) int64 { return v.OutMsgs }),
		counter("snaked_nats_in_bytes_total", "Payload bytes the embedded NATS received from its clients.", func(v *server.Varz) int64 { return v.InBytes }),
		counter("snaked_nats_out_bytes_total", "Payload bytes the embedded NATS delivered to its clients.", func(v *server.Varz) int64 { return v.OutBytes }),
		counter("snaked_nats_slow_consumers_total", "Clients the embedded NATS cut off for falling more than their pending limit behind.", func(v *server.Varz) int64 { return v.SlowConsumers }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "snaked_nats_clients", Help: "Clients connected to the embedded NATS."},
			func() float64 { return float64(s.NumClients()) }),
	}
}
