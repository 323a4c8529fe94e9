/**
 * A payment intent as a payment effect's request carries it (the `pay` step of an agent and the
 * peer's `pay` skill both write `{amount, currency, payee}`). AgentPlane moves no money: an
 * approved payment is a journaled intent whose result says `moved: false`.
 */
import { z } from 'zod';

/**
 * The request of a payment effect. `amount` may arrive as a numeric string (a templated
 * `{{input.amount}}` is written as rendered), so it is coerced; the runtime refuses a
 * non-positive one before it suspends.
 */
export const PaymentRequestSchema = z.object({
  amount: z.coerce.number().positive(),
  currency: z.string().min(1),
  payee: z.string(),
});
export type PaymentRequest = z.infer<typeof PaymentRequestSchema>;

/** Reads a payment request, or null when the request is not one (a subject from another version). */
export function readPaymentRequest(request: unknown): PaymentRequest | null {
  const parsed = PaymentRequestSchema.safeParse(request);
  return parsed.success ? parsed.data : null;
}

/** `12.50 USD`: two decimals, as an amount of money is read. */
export function paymentAmount(amount: number, currency: string): string {
  return `${amount.toFixed(2)} ${currency}`;
}
