/**
 * Pure domain rules, without a database: which documents an employee
 * reaches (docs/api.md §5), and how group names are checked and compared (docs/api.md §6.4).
 */
import { describe, expect, it } from "vitest";
import {
  checkGroupName,
  GROUP_NAME_PATTERN,
  groupNameKey,
} from "../../src/domain/counteragent-groups";
import { reachableDepartments } from "../../src/domain/document-access";
import { DomainError } from "../../src/domain/errors";
import {
  type Box,
  type DocumentAccessLevel,
  type EmployeeRights,
  HEAD_DEPARTMENT_ID,
} from "../../src/domain/model";

const HEAD = HEAD_DEPARTMENT_ID;
// HEAD ─ A ─ A1 ─ A1a ; HEAD ─ B ; C ⇄ D (a loop another writer left behind) ; E ─ (a parent never stored)
const box: Box = {
  boxId: "b",
  organizationName: "o",
  apiSubscriptionEndsAt: null,
  departments: [
    { departmentId: "A", parentDepartmentId: HEAD },
    { departmentId: "A1", parentDepartmentId: "A" },
    { departmentId: "A1a", parentDepartmentId: "A1" },
    { departmentId: "B", parentDepartmentId: HEAD },
    { departmentId: "C", parentDepartmentId: "D" },
    { departmentId: "D", parentDepartmentId: "C" },
    { departmentId: "E", parentDepartmentId: "gone" },
  ],
};
const ALL = [HEAD, "A", "A1", "A1a", "B", "C", "D", "E", "gone", "nowhere"];
function reach(level: string, department = "A", selected: string[] = []): string[] {
  const employee: EmployeeRights = {
    boxId: "b",
    userId: "u",
    isAdministrator: false,
    canManageCounteragents: false,
    canDeleteRestoreDocuments: true,
    documentAccessLevel: level as DocumentAccessLevel,
    userDepartmentId: department,
    selectedDepartmentIds: selected,
  };
  const reaches = reachableDepartments(employee, box);
  return ALL.filter((d) => reaches(d));
}

describe("DocumentAccessLevel: which departments' documents an employee reaches", () => {
  it("AllDocuments: every department, known or not", () => {
    expect(reach("AllDocuments")).toEqual(ALL);
  });
  it("DepartmentOnly: exactly the user's department", () => {
    expect(reach("DepartmentOnly", "A1")).toEqual(["A1"]);
  });
  it("DepartmentAndSubdepartments: the department and everything below it, at any depth", () => {
    expect(reach("DepartmentAndSubdepartments", "A")).toEqual(["A", "A1", "A1a"]);
    expect(reach("DepartmentAndSubdepartments", "A1a")).toEqual(["A1a"]);
  });
  it("DepartmentAndSubdepartments from the head department: everything", () => {
    expect(reach("DepartmentAndSubdepartments", HEAD)).toEqual(ALL);
  });
  it("a loop in the tree ends: C reaches C and D (each is below the other), nothing else", () => {
    expect(reach("DepartmentAndSubdepartments", "C")).toEqual(["C", "D"]);
    expect(reach("DepartmentAndSubdepartments", "A")).not.toContain("C");
  });
  it("a department whose parent was never stored is below only itself", () => {
    expect(reach("DepartmentAndSubdepartments", "E")).toEqual(["E"]);
    expect(reach("DepartmentAndSubdepartments", "gone")).toEqual(["E", "gone"]);
  });
  it("SelectedDepartments: exactly those listed, not what is below them", () => {
    expect(reach("SelectedDepartments", "A", ["B", "A1"])).toEqual(["A1", "B"]);
    expect(reach("SelectedDepartments", "A", [])).toEqual([]);
  });
  it("an access level another writer stored that we do not know: nothing", () => {
    expect(reach("Everything")).toEqual([]);
  });
});

describe("group names", () => {
  it("are compared after trimming, in NFC, with full case mapping", () => {
    expect(groupNameKey("  Partners ")).toBe(groupNameKey("PARTNERS"));
    expect(groupNameKey("Straße")).toBe(groupNameKey("STRASSE"));
    expect(groupNameKey("ΟΔΟΣ")).toBe(groupNameKey("οδοσ"));
    // "é" as one code point and as e + combining acute accent.
    expect(groupNameKey("Caf\u00e9")).toBe(groupNameKey("Cafe\u0301"));
    expect(groupNameKey("CAFE\u0301")).toBe(groupNameKey("caf\u00e9"));
    expect(groupNameKey("Partners")).not.toBe(groupNameKey("Partner"));
    expect(groupNameKey("Partners")).toBe("partners");
  });

  const cases: [string, string, boolean][] = [
    ["one character", "a", true],
    ["trimmed around", " \t a \n", true],
    ["inner spaces", "Key  accounts", true],
    ["100 code points", "x".repeat(100), true],
    ["100 emoji", "😀".repeat(100), true],
    ["101 code points", "x".repeat(101), false],
    ["100 code points and spaces around", `  ${"x".repeat(100)}  `, true],
    ["empty", "", false],
    ["blank", " \u00a0\u3000", false],
    ["a tab inside", "a\tb", false],
    ["a control character", "a\u0085b", false],
    ["DEL", "a\u007f", false],
  ];
  it.each(cases)("%s: the check and the published pattern agree (%s → %s)", (_name, raw, ok) => {
    expect(new RegExp(GROUP_NAME_PATTERN, "u").test(raw)).toBe(ok);
    if (ok) {
      expect(checkGroupName(raw)).toBe(raw.trim());
    } else {
      expect(() => checkGroupName(raw)).toThrow(DomainError);
    }
  });

  it("the words of each refusal", () => {
    const message = (raw: string) => {
      try {
        checkGroupName(raw);
      } catch (error) {
        return [(error as DomainError).errorCode, (error as DomainError).message];
      }
      return undefined;
    };
    expect(message(" ")).toEqual([
      "CounteragentGroup.InvalidName",
      "Name must be 1 to 100 characters after trimming",
    ]);
    expect(message("x".repeat(101))).toEqual([
      "CounteragentGroup.InvalidName",
      "Name must be 1 to 100 characters after trimming",
    ]);
    expect(message("a\u0000b")).toEqual([
      "CounteragentGroup.InvalidName",
      "Name must not contain control characters",
    ]);
  });
});
