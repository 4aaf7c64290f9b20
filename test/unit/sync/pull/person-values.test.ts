import { describe, expect, it } from 'vitest';
import type { WorksheetStructure } from '../../../../src/api/types.ts';
import { createPersonForm } from '../../../../src/sync/pull/person-values.ts';

// Read shapes as the platform answers them (platform-shapes §6; rows-list.json's typed variant).
const structure: WorksheetStructure = {
  id: 'ws',
  name: 'Projects',
  fields: [
    { id: 'f1', name: 'Status', alias: 'status', type: 'SingleSelect' },
    { id: 'f2', name: 'Tags', alias: 'tags', type: 'MultipleSelect' },
    { id: 'f3', name: 'Budget', alias: 'budget', type: 'Number' },
    { id: 'f4', name: 'Lead', alias: 'lead', type: 'Collaborator' },
    { id: 'f5', name: 'Customer', alias: 'customer', type: 'Relation' },
    { id: 'f6', name: 'Files', alias: 'files', type: 'Attachment' },
    { id: 'f7', name: 'Active', alias: 'is_active', type: 'Checkbox' },
    { id: 'f8', name: 'Region', alias: 'region', type: 'Region' },
    { id: 'f9', name: 'Site', alias: 'site', type: 'Location' },
    { id: 'f10', name: 'Team', alias: 'team', type: 'Department' },
    { id: 'f11', name: 'Start', alias: 'start', type: 'Date' },
    { id: 'f12', name: 'Legacy', alias: '', type: '6' },
  ],
};

describe('person form of worksheet values', () => {
  const personForm = createPersonForm(structure);

  it('turns every read shape into what a person reads in a spreadsheet', () => {
    expect(
      personForm({
        status: [{ key: 'k-gold', value: 'Gold' }],
        tags: [
          { key: 'k1', value: 'urgent' },
          { key: 'k2', value: 'north' },
        ],
        budget: '125000.50',
        lead: [{ accountId: 'acc-1', fullname: 'Dana Whitfield', avatar: 'x', status: 1 }],
        customer: [{ sid: 'row-1', name: 'Northwind' }],
        files: [
          {
            file_id: 'f',
            file_name: 'site-plan.pdf',
            file_size: 10,
            downloadUrl: 'https://files.example/p.pdf',
          },
        ],
        is_active: '1',
        region: { code: '310104', name: 'Shanghai/Xuhui District' },
        site: '{"x":4.4,"y":51.9,"address":"Wilhelminakade 1, Rotterdam","title":"Head office"}',
        team: [{ departmentId: 'd1', departmentName: 'Field Engineering' }],
        start: '2025-03-14',
        f12: '7',
        unknown_key: [{ key: 'k', value: 'kept' }],
      }),
    ).toEqual({
      status: 'Gold',
      tags: 'urgent, north',
      budget: 125000.5,
      lead: 'Dana Whitfield',
      customer: 'Northwind',
      files: 'site-plan.pdf (https://files.example/p.pdf)',
      is_active: true,
      region: 'Shanghai/Xuhui District',
      site: 'Wilhelminakade 1, Rotterdam',
      team: 'Field Engineering',
      start: '2025-03-14',
      f12: 7,
      unknown_key: [{ key: 'k', value: 'kept' }],
    });
  });

  it('makes empty values null and keeps a checkbox "0" as false', () => {
    expect(personForm({ status: [], budget: '', lead: [], is_active: '0', files: [] })).toEqual({
      status: null,
      budget: null,
      lead: null,
      is_active: false,
      files: null,
    });
  });
});
