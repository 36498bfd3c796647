/*
Copyright 2026 The myapp-operator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package simulator

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"time"
)

// jsonDuration reads and writes a duration as Go spells it ("250ms", "30s"),
// which is what a person types into curl.
type jsonDuration time.Duration

func (d jsonDuration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

func (d *jsonDuration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return errors.New(`a duration must be a string such as "250ms" or "30s"`)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("duration %q: %w", s, err)
	}
	if v < 0 {
		return fmt.Errorf("duration %q must not be negative", s)
	}
	*d = jsonDuration(v)
	return nil
}

// faultJSON is a Fault on the admin API.
type faultJSON struct {
	Latency          jsonDuration `json:"latency,omitzero"`
	Hang             bool         `json:"hang,omitempty"`
	Status           int          `json:"status,omitempty"`
	RetryAfter       jsonDuration `json:"retryAfter,omitzero"`
	RetryAfterDate   bool         `json:"retryAfterDate,omitempty"`
	ResetAfterCommit bool         `json:"resetAfterCommit,omitempty"`
	Body             BodyFault    `json:"body,omitempty"`
	Rate             float64      `json:"rate,omitempty"`
	Count            int          `json:"count,omitempty"`
}

func (f faultJSON) fault() Fault {
	return Fault{
		Latency: time.Duration(f.Latency), Hang: f.Hang, Status: f.Status,
		RetryAfter: time.Duration(f.RetryAfter), RetryAfterDate: f.RetryAfterDate,
		ResetAfterCommit: f.ResetAfterCommit, Body: f.Body, Rate: f.Rate, Count: f.Count,
	}
}

func toFaultJSON(f Fault) faultJSON {
	return faultJSON{
		Latency: jsonDuration(f.Latency), Hang: f.Hang, Status: f.Status,
		RetryAfter: jsonDuration(f.RetryAfter), RetryAfterDate: f.RetryAfterDate,
		ResetAfterCommit: f.ResetAfterCommit, Body: f.Body, Rate: f.Rate, Count: f.Count,
	}
}

type faultRuleJSON struct {
	Service   Service   `json:"service"`
	Operation Operation `json:"operation"`
	Fault     faultJSON `json:"fault"`
}

// settingsJSON is the body of GET and PATCH /admin/v1/settings. In a PATCH,
// fields left out keep their value.
type settingsJSON struct {
	PropagationDelay *jsonDuration              `json:"propagationDelay,omitempty"`
	BackupDuration   *jsonDuration              `json:"backupDuration,omitempty"`
	ConsistencyDelay map[Service]jsonDuration   `json:"consistencyDelay,omitempty"`
	BackupFailure    *backupFailureSettingsJSON `json:"backupFailure,omitempty"`
}

type backupFailureSettingsJSON struct {
	// Reason makes new backups fail with it; empty stops failing them.
	Reason string `json:"reason"`
	// Count is how many more backups fail; 0 means all while Reason is set.
	Count int `json:"count"`
}

func (s *Server) adminState(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	body := struct {
		Records []Record `json:"records"`
		Backups []Backup `json:"backups"`
	}{s.listRecordsLocked("", "", false), s.listBackupsLocked("", "", false)}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, body)
}

func (s *Server) adminReset(w http.ResponseWriter, _ *http.Request) {
	s.Reset()
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) adminFaults(w http.ResponseWriter, _ *http.Request) {
	rules := s.Faults()
	body := struct {
		Faults  []faultRuleJSON `json:"faults"`
		Outages []Service       `json:"outages"`
	}{Faults: make([]faultRuleJSON, 0, len(rules)), Outages: []Service{}}
	for _, r := range rules {
		body.Faults = append(body.Faults, faultRuleJSON{Service: r.Service, Operation: r.Operation, Fault: toFaultJSON(r.Fault)})
	}
	s.mu.Lock()
	for svc := range s.outages {
		body.Outages = append(body.Outages, svc)
	}
	s.mu.Unlock()
	sort.Slice(body.Outages, func(i, j int) bool { return body.Outages[i] < body.Outages[j] })
	writeJSON(w, http.StatusOK, body)
}

func (s *Server) adminClearFaults(w http.ResponseWriter, _ *http.Request) {
	s.ClearFaults()
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) adminSetFault(w http.ResponseWriter, r *http.Request) {
	service, op := Service(r.PathValue("service")), Operation(r.PathValue("operation"))
	var body faultJSON
	if !decodeBody(w, r, &body) {
		return
	}
	if err := s.setFault(service, op, body.fault()); err != nil {
		writeError(w, http.StatusBadRequest, "invalid", err.Error(), "")
		return
	}
	writeJSON(w, http.StatusOK, faultRuleJSON{Service: service, Operation: op, Fault: body})
}

func (s *Server) adminClearFault(w http.ResponseWriter, r *http.Request) {
	service, op := Service(r.PathValue("service")), Operation(r.PathValue("operation"))
	if err := validTarget(service, op); err != nil {
		writeError(w, http.StatusBadRequest, "invalid", err.Error(), "")
		return
	}
	s.ClearFault(service, op)
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) adminSetOutage(w http.ResponseWriter, r *http.Request) {
	service := Service(r.PathValue("service"))
	if err := validTarget(service, AllOperations); err != nil {
		writeError(w, http.StatusBadRequest, "invalid", err.Error(), "")
		return
	}
	var body struct {
		Down *bool `json:"down"`
	}
	if !decodeBody(w, r, &body) {
		return
	}
	if body.Down == nil {
		writeError(w, http.StatusBadRequest, "invalid", `"down" is required`, "")
		return
	}
	s.SetOutage(service, *body.Down)
	writeJSON(w, http.StatusOK, struct {
		Service Service `json:"service"`
		Down    bool    `json:"down"`
	}{service, *body.Down})
}

func (s *Server) adminSettings(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	body := s.settingsLocked()
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, body)
}

func (s *Server) settingsLocked() settingsJSON {
	propagation, backup := jsonDuration(s.propagationDelay), jsonDuration(s.backupDuration)
	count := max(s.backupFailRemaining, 0)
	return settingsJSON{
		PropagationDelay: &propagation,
		BackupDuration:   &backup,
		ConsistencyDelay: map[Service]jsonDuration{
			ServiceDNS:    jsonDuration(s.consistencyDelay[ServiceDNS]),
			ServiceBackup: jsonDuration(s.consistencyDelay[ServiceBackup]),
		},
		BackupFailure: &backupFailureSettingsJSON{Reason: s.backupFailReason, Count: count},
	}
}

func (s *Server) adminUpdateSettings(w http.ResponseWriter, r *http.Request) {
	var body settingsJSON
	if !decodeBody(w, r, &body) {
		return
	}
	// Check everything before changing anything, so a bad request changes
	// nothing.
	for svc := range body.ConsistencyDelay {
		if err := validTarget(svc, AllOperations); err != nil {
			writeError(w, http.StatusBadRequest, "invalid", "consistencyDelay: "+err.Error(), "")
			return
		}
	}
	if body.BackupFailure != nil && body.BackupFailure.Count < 0 {
		writeError(w, http.StatusBadRequest, "invalid", "backupFailure.count must not be negative", "")
		return
	}
	s.mu.Lock()
	if body.PropagationDelay != nil {
		s.propagationDelay = time.Duration(*body.PropagationDelay)
	}
	if body.BackupDuration != nil {
		s.backupDuration = time.Duration(*body.BackupDuration)
	}
	for svc, d := range body.ConsistencyDelay {
		s.setConsistencyDelayLocked(svc, time.Duration(d))
	}
	if f := body.BackupFailure; f != nil {
		s.failBackupsLocked(f.Reason, f.Count)
	}
	current := s.settingsLocked()
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, current)
}

func (s *Server) adminStats(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string][]RequestCount{"requests": s.RequestCounts()})
}

func (s *Server) adminResetStats(w http.ResponseWriter, _ *http.Request) {
	s.ResetRequestCounts()
	w.WriteHeader(http.StatusNoContent)
}
