//! Strongly connected components (Tarjan), iterative so a deep tree cannot overflow the stack.

/// The strongly connected components of a directed graph given as adjacency lists, each a list of
/// node indices. Every node is in exactly one component; a node alone on no loop is a component
/// of one.
pub(crate) fn strongly_connected(adjacency: &[Vec<usize>]) -> Vec<Vec<usize>> {
    const UNSEEN: usize = usize::MAX;
    let n = adjacency.len();
    let mut index = vec![UNSEEN; n];
    let mut low = vec![0; n];
    let mut on_stack = vec![false; n];
    let mut stack = Vec::new();
    let mut next = 0;
    let mut components = Vec::new();
    for start in 0..n {
        if index[start] != UNSEEN {
            continue;
        }
        // (node, position of the next edge to follow)
        let mut work = vec![(start, 0)];
        index[start] = next;
        low[start] = next;
        next += 1;
        stack.push(start);
        on_stack[start] = true;
        while let Some(&(node, edge)) = work.last() {
            if let Some(&to) = adjacency[node].get(edge) {
                if let Some(top) = work.last_mut() {
                    top.1 += 1;
                }
                if to >= n {
                    continue;
                }
                if index[to] == UNSEEN {
                    index[to] = next;
                    low[to] = next;
                    next += 1;
                    stack.push(to);
                    on_stack[to] = true;
                    work.push((to, 0));
                } else if on_stack[to] {
                    low[node] = low[node].min(index[to]);
                }
                continue;
            }
            work.pop();
            if let Some(&(parent, _)) = work.last() {
                low[parent] = low[parent].min(low[node]);
            }
            if low[node] == index[node] {
                let mut component = Vec::new();
                while let Some(member) = stack.pop() {
                    on_stack[member] = false;
                    component.push(member);
                    if member == node {
                        break;
                    }
                }
                component.sort_unstable();
                components.push(component);
            }
        }
    }
    components
}
