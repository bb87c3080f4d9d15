//! State the layers above keep on the database handle, one value per type, made on first use.
//! Infra knows none of their types: each room of the domain keeps its own caches (the catalog's
//! SKUs, tenancy's API keys, the slots' freed places, …) and asks for them here by type, so a
//! test's second app on the same process (another instance) has caches of its own, as a second
//! process would.

use std::any::{Any, TypeId};
use std::sync::{Arc, PoisonError, RwLock};

type Value = Arc<dyn Any + Send + Sync>;

#[derive(Default)]
pub struct Extensions {
    // A handful of types, read on every request and written once each: a scan under a read lock.
    values: RwLock<Vec<(TypeId, Value)>>,
}

impl Extensions {
    /// This handle's value of type `T`, made with `T::default()` the first time it is asked for.
    pub fn get<T: Default + Send + Sync + 'static>(&self) -> Arc<T> {
        let id = TypeId::of::<T>();
        if let Some(v) = find::<T>(
            &self.values.read().unwrap_or_else(PoisonError::into_inner),
            id,
        ) {
            return v;
        }
        let mut values = self.values.write().unwrap_or_else(PoisonError::into_inner);
        // Another caller may have made it between the two locks.
        if let Some(v) = find::<T>(&values, id) {
            return v;
        }
        let v = Arc::new(T::default());
        values.push((id, v.clone()));
        v
    }
}

impl std::fmt::Debug for Extensions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Extensions").finish_non_exhaustive()
    }
}

fn find<T: Send + Sync + 'static>(values: &[(TypeId, Value)], id: TypeId) -> Option<Arc<T>> {
    values
        .iter()
        .find(|(t, _)| *t == id)
        .and_then(|(_, v)| v.clone().downcast::<T>().ok())
}

#[cfg(test)]
mod tests {
    use super::Extensions;
    use std::sync::atomic::{AtomicU32, Ordering};

    #[derive(Default)]
    struct Counter(AtomicU32);

    #[derive(Default)]
    struct Other(AtomicU32);

    #[test]
    fn one_value_per_type_made_once_and_shared() {
        let ext = Extensions::default();
        ext.get::<Counter>().0.fetch_add(2, Ordering::Relaxed);
        ext.get::<Counter>().0.fetch_add(3, Ordering::Relaxed);
        ext.get::<Other>().0.fetch_add(7, Ordering::Relaxed);
        assert_eq!(ext.get::<Counter>().0.load(Ordering::Relaxed), 5);
        assert_eq!(ext.get::<Other>().0.load(Ordering::Relaxed), 7);
        let another = Extensions::default();
        assert_eq!(another.get::<Counter>().0.load(Ordering::Relaxed), 0);
    }
}
