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

package simulator_test

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/myapp-operator/myapp-operator/internal/contract"
	"github.com/myapp-operator/myapp-operator/internal/simulator"
	"github.com/myapp-operator/myapp-operator/internal/simulator/simtest"
)

const (
	docsPath = "../../docs/external-api.md"
	// docsBaseURL and docsToken are what the documentation's examples use:
	// go run ./cmd/simulator --token devtoken.
	docsBaseURL = "http://127.0.0.1:8090"
	docsToken   = "devtoken"
)

var updateDocs = flag.Bool("update-docs", false, "rewrite the responses in docs/external-api.md from the server's answers")

// docsEpoch is the simulated time the documented timestamps start from.
var docsEpoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// shownHeaders are the response headers the documentation prints; the others
// (Date, Content-Length) change from run to run and say nothing.
var shownHeaders = []string{"Content-Type", "Retry-After", "Www-Authenticate"}

// docExample is a curl command from the documentation and the response
// block that follows it.
type docExample struct {
	line     int
	command  string
	advance  time.Duration // simulated time that passes before the command
	response string
	// respStart and respEnd delimit the response block's lines in the file.
	respStart, respEnd int
}

// TestDocumentedExamples runs every curl example in docs/external-api.md, in
// order, against a simulator started the way the documentation starts it,
// and requires each response to read exactly as documented. Run with
// -update-docs to rewrite the documented responses after a deliberate change.
func TestDocumentedExamples(t *testing.T) {
	g := NewWithT(t)
	data, err := os.ReadFile(docsPath)
	g.Expect(err).NotTo(HaveOccurred())
	lines := strings.Split(string(data), "\n")
	examples, err := parseDocExamples(lines)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(len(examples)).To(BeNumerically(">", 20), "the documentation has its examples")

	clock := clocktesting.NewFakeClock(docsEpoch)
	sim, url := simtest.Start(t, simulator.Options{
		Token:            docsToken,
		PropagationDelay: simulator.DefaultPropagationDelay,
		BackupDuration:   simulator.DefaultBackupDuration,
		Clock:            clock,
	})

	seen := map[string]bool{}
	for i := range examples {
		ex := &examples[i]
		clock.Step(ex.advance)
		req, err := curlRequest(ex.command, url)
		if err != nil {
			t.Fatalf("%s:%d: %v", docsPath, ex.line, err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s:%d: %v", docsPath, ex.line, err)
		}
		got, err := renderResponse(resp)
		if err != nil {
			t.Fatalf("%s:%d: %v", docsPath, ex.line, err)
		}
		// Collect the endpoints as they are called, since the last example
		// resets the counters.
		for _, c := range sim.RequestCounts() {
			seen[string(c.Service)+" "+string(c.Operation)] = true
		}
		if *updateDocs {
			ex.response = got
			continue
		}
		if got != ex.response {
			t.Errorf("%s:%d: %s\ndocumented response:\n%s\nactual response:\n%s", docsPath, ex.line, ex.command, ex.response, got)
		}
	}

	if *updateDocs {
		// Replace blocks from the last, so earlier line numbers stay valid.
		for i := len(examples) - 1; i >= 0; i-- {
			ex := examples[i]
			block := strings.Split(strings.TrimSuffix(ex.response, "\n"), "\n")
			lines = append(lines[:ex.respStart], append(block, lines[ex.respEnd:]...)...)
		}
		g.Expect(os.WriteFile(docsPath, []byte(strings.Join(lines, "\n")), 0o644)).To(Succeed())
		return
	}

	// Every endpoint has at least one example, so the documentation cannot
	// silently fall behind a new endpoint.
	for _, endpoint := range []string{
		"dns upsert", "dns get", "dns delete", "dns list", "dns transfer", "dns put-claim", "dns get-claim",
		"backup start", "backup get", "backup delete", "backup list",
		"admin state", "admin reset", "admin faults", "admin clear-faults", "admin set-fault",
		"admin clear-fault", "admin set-outage", "admin settings", "admin update-settings",
		"admin stats", "admin reset-stats",
	} {
		g.Expect(seen).To(HaveKey(endpoint), "no documented example calls %s", endpoint)
	}
}

// TestDocumentedLimits ties the DNS service's limits as the documentation
// states them to the constants the simulator enforces and the operator
// checks its values against.
func TestDocumentedLimits(t *testing.T) {
	g := NewWithT(t)
	data, err := os.ReadFile(docsPath)
	g.Expect(err).NotTo(HaveOccurred())
	for _, want := range []string{
		fmt.Sprintf("at least two labels, at most %d characters.", contract.MaxNameLength),
		fmt.Sprintf("| `ttl` | integer | Seconds, %d to %d. |", contract.MinTTL, contract.MaxTTL),
		fmt.Sprintf("1 to %d of `A-Z a-z 0-9 - . _ : /`", contract.MaxOwnerLength),
		fmt.Sprintf("a DNS label (`a-z`, `0-9`, `-`, at most %d)", contract.MaxLabelLength),
	} {
		g.Expect(string(data)).To(ContainSubstring(want))
	}
}

// parseDocExamples finds every ```sh block that starts with curl. Each must be
// followed by an ```http block with the response. A comment such as
// <!-- doctest: advance 5s --> before a command moves the simulated clock.
func parseDocExamples(lines []string) ([]docExample, error) {
	var examples []docExample
	var advance time.Duration
	for i := 0; i < len(lines); i++ {
		line := strings.TrimSpace(lines[i])
		if d, ok := strings.CutPrefix(line, "<!-- doctest: advance "); ok {
			v, err := time.ParseDuration(strings.TrimSuffix(d, " -->"))
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", i+1, err)
			}
			advance += v
			continue
		}
		if line != "```sh" {
			continue
		}
		start := i + 1
		end := start
		for end < len(lines) && strings.TrimSpace(lines[end]) != "```" {
			end++
		}
		command := strings.Join(lines[start:end], "\n")
		i = end
		if !strings.HasPrefix(command, "curl ") {
			continue
		}
		// The response block comes next, after blank lines or prose.
		j := end + 1
		for j < len(lines) && strings.TrimSpace(lines[j]) != "```http" {
			if strings.HasPrefix(strings.TrimSpace(lines[j]), "```") {
				return nil, fmt.Errorf("line %d: curl example without an ```http response block", start)
			}
			j++
		}
		if j == len(lines) {
			return nil, fmt.Errorf("line %d: curl example without an ```http response block", start)
		}
		respStart := j + 1
		respEnd := respStart
		for respEnd < len(lines) && strings.TrimSpace(lines[respEnd]) != "```" {
			respEnd++
		}
		examples = append(examples, docExample{
			line:      start,
			command:   command,
			advance:   advance,
			response:  strings.Join(lines[respStart:respEnd], "\n") + "\n",
			respStart: respStart,
			respEnd:   respEnd,
		})
		advance = 0
		i = respEnd
	}
	return examples, nil
}

// curlRequest turns the subset of curl the documentation uses into a
// request against baseURL. Anything else is an error, so the documentation
// cannot use a flag this test would silently ignore.
func curlRequest(command, baseURL string) (*http.Request, error) {
	args, err := shellWords(command)
	if err != nil {
		return nil, err
	}
	if len(args) == 0 || args[0] != "curl" {
		return nil, errors.New("not a curl command")
	}
	cmd, err := parseCurlArgs(args[1:])
	if err != nil {
		return nil, err
	}
	if !cmd.showsHeaders {
		return nil, errors.New("examples use curl -i, so the status is shown")
	}
	rest, ok := strings.CutPrefix(cmd.target, docsBaseURL)
	if !ok {
		return nil, fmt.Errorf("URL %q does not start with %s", cmd.target, docsBaseURL)
	}
	method := cmd.method
	if method == "" {
		method = http.MethodGet
		if cmd.hasBody {
			method = http.MethodPost
		}
	}
	var reader io.Reader
	if cmd.hasBody {
		reader = strings.NewReader(cmd.body)
		if cmd.header.Get("Content-Type") == "" {
			cmd.header.Set("Content-Type", "application/x-www-form-urlencoded") // what curl -d sends
		}
	}
	req, err := http.NewRequest(method, baseURL+rest, reader)
	if err != nil {
		return nil, err
	}
	req.Header = cmd.header
	return req, nil
}

// curlCommand is what the arguments of a documented curl command ask for.
type curlCommand struct {
	method, target, body  string
	header                http.Header
	hasBody, showsHeaders bool
}

// parseCurlArgs reads curl's arguments, after the command name.
func parseCurlArgs(args []string) (curlCommand, error) {
	cmd := curlCommand{header: http.Header{}}
	for i := 0; i < len(args); i++ {
		arg := args[i]
		switch arg {
		case "-s", "-S", "-sS", "-Ss":
			continue
		case "-i", "-sSi", "-isS":
			cmd.showsHeaders = true
			continue
		case "-X", "-H", "-d", "--data":
			if i+1 >= len(args) {
				return cmd, fmt.Errorf("%s needs a value", arg)
			}
			i++
			if err := cmd.setOption(arg, args[i]); err != nil {
				return cmd, err
			}
			continue
		}
		if strings.HasPrefix(arg, "-") {
			return cmd, fmt.Errorf("curl flag %s is not understood by this test", arg)
		}
		if cmd.target != "" {
			return cmd, fmt.Errorf("two URLs: %s and %s", cmd.target, arg)
		}
		cmd.target = arg
	}
	return cmd, nil
}

// setOption applies one of the curl flags that take a value.
func (c *curlCommand) setOption(option, value string) error {
	switch option {
	case "-X":
		c.method = value
	case "-H":
		name, v, ok := strings.Cut(value, ":")
		if !ok {
			return fmt.Errorf("header %q has no colon", value)
		}
		c.header.Add(strings.TrimSpace(name), strings.TrimSpace(v))
	default: // -d, --data
		c.body, c.hasBody = value, true
	}
	return nil
}

// shellWords splits a command the way sh would for the quoting the
// documentation uses: single quotes, double quotes, backslash escapes and
// backslash-newline continuations.
func shellWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
			continue
		case c == '\\' && i+1 < len(s) && s[i+1] == '\n':
			i++
			continue
		case strings.IndexByte("|&;<>()$`*?[]{}~", c) >= 0:
			return nil, fmt.Errorf("shell character %q outside quotes", c)
		}
		n, err := wordPart(s[i:], &cur)
		if err != nil {
			return nil, err
		}
		i += n - 1
		inWord = true
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// wordPart appends to cur what the start of s adds to a word: an escaped
// character, a quoted string or a plain character. It returns how many bytes
// of s that took.
func wordPart(s string, cur *strings.Builder) (int, error) {
	switch {
	case s[0] == '\\' && len(s) > 1:
		cur.WriteByte(s[1])
		return 2, nil
	case s[0] == '\'':
		end := strings.IndexByte(s[1:], '\'')
		if end < 0 {
			return 0, errors.New("unterminated single quote")
		}
		cur.WriteString(s[1 : 1+end])
		return end + 2, nil
	case s[0] == '"':
		j := 1
		for ; j < len(s) && s[j] != '"'; j++ {
			if s[j] == '\\' && j+1 < len(s) && strings.IndexByte(`"\$`+"`", s[j+1]) >= 0 {
				j++
			}
			cur.WriteByte(s[j])
		}
		if j == len(s) {
			return 0, errors.New("unterminated double quote")
		}
		return j + 1, nil
	default:
		cur.WriteByte(s[0])
		return 1, nil
	}
}

// renderResponse prints a response the way the documentation shows it: the
// status line, the headers worth showing, and the body.
func renderResponse(resp *http.Response) (string, error) {
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "HTTP/1.1 %d %s\n", resp.StatusCode, http.StatusText(resp.StatusCode))
	for _, name := range shownHeaders {
		if v := resp.Header.Get(name); v != "" {
			fmt.Fprintf(&b, "%s: %s\n", name, v)
		}
	}
	if len(body) > 0 {
		b.WriteString("\n")
		b.Write(body)
	}
	return b.String(), nil
}
