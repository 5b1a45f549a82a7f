import { Webhook as StandardWebhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { newSecret, signature, signatureHeader } from './signature.js';

describe('Standard Webhooks signatures', () => {
  it('reproduce the specification\'s published test vector', () => {
    // https://github.com/standard-webhooks/standard-webhooks, the reference libraries' signing test.
    expect(signature('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}')).toBe(
      'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
    );
  });

  it('verify with an independent implementation, each secret of a rotation on its own', () => {
    const [current, previous] = [newSecret(), newSecret()];
    expect(current).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const timestamp = Math.floor(Date.now() / 1000);
    const body = '{"type":"ping"}';
    const header = signatureHeader([current, previous], 'd1', timestamp, body);
    expect(header.split(' ')).toHaveLength(2);
    for (const secret of [current, previous]) {
      expect(() => new StandardWebhook(secret).verify(body, { 'webhook-id': 'd1', 'webhook-timestamp': String(timestamp), 'webhook-signature': header })).not.toThrow();
    }
    expect(() => new StandardWebhook(newSecret()).verify(body, { 'webhook-id': 'd1', 'webhook-timestamp': String(timestamp), 'webhook-signature': header })).toThrow();
  });
});
