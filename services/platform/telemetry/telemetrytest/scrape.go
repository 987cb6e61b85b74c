package telemetrytest

import (
	"fmt"
	"net/http"
	"net/http/httptest"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Metrics is one scrape of a Prometheus handler, by metric family name.
type Metrics map[string]*dto.MetricFamily

// Scrape asks h for its metrics in the text format Prometheus scrapes and
// parses them.
func Scrape(h http.Handler) (Metrics, error) {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		return nil, fmt.Errorf("scrape: status %d: %s", rec.Code, rec.Body)
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(rec.Body)
	if err != nil {
		return nil, fmt.Errorf("scrape: %w", err)
	}
	return Metrics(fams), nil
}

// Value adds up the series of the named family that carry every one of
// the given label pairs (name, value, name, value...): counters' and
// gauges' values, histograms' sample counts. found is false when no series
// matches.
func (m Metrics) Value(family string, labels ...string) (v float64, found bool) {
	for _, s := range m[family].GetMetric() {
		if !hasLabels(s, labels) {
			continue
		}
		found = true
		switch {
		case s.Counter != nil:
			v += s.GetCounter().GetValue()
		case s.Gauge != nil:
			v += s.GetGauge().GetValue()
		case s.Histogram != nil:
			v += float64(s.GetHistogram().GetSampleCount())
		}
	}
	return v, found
}

// Sum adds up the sums of the named histogram's matching series.
func (m Metrics) Sum(family string, labels ...string) float64 {
	var sum float64
	for _, s := range m[family].GetMetric() {
		if hasLabels(s, labels) {
			sum += s.GetHistogram().GetSampleSum()
		}
	}
	return sum
}

func hasLabels(s *dto.Metric, labels []string) bool {
	for i := 0; i+1 < len(labels); i += 2 {
		ok := false
		for _, l := range s.GetLabel() {
			if l.GetName() == labels[i] && l.GetValue() == labels[i+1] {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}
