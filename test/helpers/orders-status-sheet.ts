import type { CreateWorksheetInput } from '../../src/api/types.ts';

/** A small worksheet with a key and a single-select field: enough for a run and a dead letter. */
export const ORDERS_WITH_STATUS: CreateWorksheetInput = {
  name: 'Orders',
  alias: 'orders',
  fields: [
    { name: 'Order number', alias: 'order_no', type: '2', required: true, isTitle: true },
    {
      name: 'Status',
      alias: 'status',
      type: '11',
      options: [
        { value: 'New', index: 1 },
        { value: 'Paid', index: 2 },
      ],
    },
  ],
};
