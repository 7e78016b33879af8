package report

import (
	"context"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rdmabench/rdmabench/env"
)

// envChromium, set to 1, promises headless Chromium (CI installs
// Debian's chromium): the render test fails instead of skipping when it
// is missing.
const envChromium = env.VarChromium

// chromium returns the browser's path, or skips (fails when promised).
func chromium(t *testing.T) string {
	t.Helper()
	if os.Getenv(env.VarVM) == "1" {
		// The promise is the host's: rxevm passes RDMABENCH_ variables on.
		t.Skip("skipping: the page renders on the host; the soft-RoCE VM has no browser")
	}
	path, err := exec.LookPath("chromium")
	if err == nil {
		return path
	}
	if os.Getenv(envChromium) == "1" {
		t.Fatalf("%s=1 promises headless Chromium, but: %v (apt-get install chromium, or make deps)", envChromium, err)
	}
	t.Skipf("skipping: no chromium to render the page (%v); apt-get install chromium to run it, %s=1 to require it", err, envChromium)
	return ""
}

// render loads page in headless Chromium, lets its load handler run, and
// returns the DOM as the browser has it then.
func render(t *testing.T, browser, page string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run",
		"--user-data-dir="+t.TempDir(), "--virtual-time-budget=30000", "--dump-dom",
		(&url.URL{Scheme: "file", Path: page}).String())
	cmd.WaitDelay = 5 * time.Second
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "chromium: %s", stderr.String())
	return string(out)
}

// imageCheck reads the mark the page's own script leaves once loaded:
// how many images it has and which failed to decode.
func imageCheck(t *testing.T, dom string) (images int, broken []string) {
	t.Helper()
	tag := regexp.MustCompile(`<p id="broken"[^>]*>`).FindString(dom)
	require.NotEmpty(t, tag, "the page's image check is not in the DOM:\n%.2000s", dom)
	attr := func(name string) string {
		m := regexp.MustCompile(name + `="([^"]*)"`).FindStringSubmatch(tag)
		if m == nil {
			return ""
		}
		return m[1]
	}
	require.Equal(t, "yes", attr("data-checked"), "the load handler did not run: %s", tag)
	n, err := strconv.Atoi(attr("data-images"))
	require.NoError(t, err, tag)
	return n, strings.Fields(attr("data-broken"))
}

// TestIndexRendersInChromium opens the index as a person would, in
// Chromium, and checks that every image on it (the overview and every
// run's histogram) decoded; then breaks one picture and checks that the
// page says so.
func TestIndexRendersInChromium(t *testing.T) {
	browser := chromium(t)
	out := writeResults(t)
	index := build(t, out)
	page, err := os.ReadFile(index)
	require.NoError(t, err)
	for _, l := range links(string(page)) {
		assert.FileExists(t, filepath.Join(out, filepath.FromSlash(l)))
	}

	images, broken := imageCheck(t, render(t, browser, index))
	assert.Equal(t, 24+1, images, "every run's histogram and the overview")
	assert.Empty(t, broken)

	// A picture that is not one (an error message saved under its name):
	// the browser cannot decode it, and the page names it.
	thumb := filepath.Join(out, "artifacts/_artifacts/101/histogram.png")
	require.NoError(t, os.WriteFile(thumb, []byte("latplot: no samples to draw\n"), 0o644))
	_, broken = imageCheck(t, render(t, browser, index))
	assert.Equal(t, []string{"artifacts/_artifacts/101/histogram.png"}, broken)
}
