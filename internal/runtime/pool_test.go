package runtime

import "testing"

// The pool hands a request the smallest free buffer that holds it, the most
// recently freed among equals, and allocates only when none does: buffers
// of different sizes are shared, so the peak is the bytes alive at once.
func TestPoolBestFit(t *testing.T) {
	p := newPool()
	a, b, c := p.get(400), p.get(100), p.get(100)
	if p.peak != 600 {
		t.Fatalf("peak %d after 400+100+100 bytes, want 600", p.peak)
	}
	p.put(a)
	p.put(b)
	p.put(c)
	got := p.get(60) // fits all three: a 100-byte one, the later freed (c)
	if len(got) != 60 || &got[:1][0] != &c[0] {
		t.Errorf("60 bytes: got len %d, want c's buffer (the latest freed of the smallest fit)", len(got))
	}
	big := p.get(300) // only a fits
	if len(big) != 300 || &big[0] != &a[0] {
		t.Errorf("300 bytes: want a's 400-byte buffer")
	}
	if p.get(100); p.peak != 600 {
		t.Errorf("peak %d after reusing three freed buffers, want 600", p.peak)
	}
	p.put(got) // back at its full capacity
	if again := p.get(100); cap(again) != 100 || &again[0] != &c[0] {
		t.Errorf("a buffer given back at part length came back with capacity %d, want c's 100", cap(again))
	}
	if p.get(101); p.peak != 701 {
		t.Errorf("peak %d: a request larger than every free buffer must allocate (want 701)", p.peak)
	}
}
