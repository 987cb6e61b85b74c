package remote

import "context"

// SetGrace makes a call's wait for the service end with the context grace
// returns instead of after Grace, so that a test decides when it ends.
func (c *Conn) SetGrace(grace func(context.Context) (context.Context, context.CancelFunc)) {
	c.grace = grace
}
