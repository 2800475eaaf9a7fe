/** Which documents an employee reaches, by DocumentAccessLevel over the department tree (docs/api.md §5). */
import { type Box, DocumentAccessLevel, type EmployeeRights, HEAD_DEPARTMENT_ID } from "./model";

export type DepartmentFilter = (departmentId: string) => boolean;

/** A test of "does this employee reach documents of that department". */
export function reachableDepartments(employee: EmployeeRights, box: Box): DepartmentFilter {
  switch (employee.documentAccessLevel) {
    case DocumentAccessLevel.AllDocuments:
      return () => true;
    case DocumentAccessLevel.DepartmentOnly:
      return (departmentId) => departmentId === employee.userDepartmentId;
    case DocumentAccessLevel.DepartmentAndSubdepartments: {
      const parentOf = new Map(box.departments.map((d) => [d.departmentId, d.parentDepartmentId]));
      const root = employee.userDepartmentId;
      return (departmentId) => isWithin(departmentId, root, parentOf);
    }
    case DocumentAccessLevel.SelectedDepartments: {
      const selected = new Set(employee.selectedDepartmentIds);
      return (departmentId) => selected.has(departmentId);
    }
    default:
      // Stryker disable next-line ArrowFunction: undefined is as false as false
      return () => false;
  }
}

/** True when `departmentId` is `root` or lies below it, at any depth. */
function isWithin(
  departmentId: string,
  root: string,
  parentOf: ReadonlyMap<string, string>,
): boolean {
  if (root === HEAD_DEPARTMENT_ID) {
    return true;
  }
  const seen = new Set<string>();
  for (
    let at: string | undefined = departmentId;
    // Stryker disable next-line ConditionalExpression: undefined is never a department: the walk stops at it either way
    at !== undefined && !seen.has(at);
    at = parentOf.get(at)
  ) {
    if (at === root) {
      return true;
    }
    seen.add(at);
  }
  return false;
}
