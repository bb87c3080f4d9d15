//! Why stock was adjusted: a fixed list with categories, beside the free note. Reports and the
//! ledger filter by the code; the note says what the code cannot ("cracked in transit").

use crate::domain::stock::AdjustKind;

crate::text_enum! {
    /// A stock adjustment's reason, as the API takes it (`reason_code`) and the ledger keeps it.
    pub enum AdjustReason {
        Received = "received",
        ReturnRestock = "return_restock",
        Correction = "correction",
        Count = "count",
        Damaged = "damaged",
        TheftLoss = "theft_loss",
        PromotionDonation = "promotion_donation",
        QcHold = "qc_hold",
        Other = "other",
    }
}

crate::text_enum! {
    /// What a reason does to the stock, for grouping in forms and reports.
    pub enum ReasonGroup {
        Inbound = "inbound",
        Outbound = "outbound",
        Adjustment = "adjustment",
        Hold = "hold",
        Other = "other",
    }
}

impl AdjustReason {
    pub fn category(self) -> ReasonGroup {
        match self {
            AdjustReason::Received | AdjustReason::ReturnRestock => ReasonGroup::Inbound,
            AdjustReason::Damaged | AdjustReason::TheftLoss | AdjustReason::PromotionDonation => {
                ReasonGroup::Outbound
            }
            AdjustReason::Correction | AdjustReason::Count => ReasonGroup::Adjustment,
            AdjustReason::QcHold => ReasonGroup::Hold,
            AdjustReason::Other => ReasonGroup::Other,
        }
    }

    /// Whether the reason makes sense for this kind of adjustment: "damaged" writes off or holds,
    /// it does not receive. `other` fits everything (and then needs a note).
    pub fn fits(self, kind: AdjustKind) -> bool {
        use AdjustKind as K;
        match self {
            AdjustReason::Received | AdjustReason::ReturnRestock => kind == K::Receive,
            AdjustReason::Correction => {
                matches!(kind, K::Receive | K::WriteOff | K::Count | K::Transfer)
            }
            AdjustReason::Count => kind == K::Count,
            AdjustReason::Damaged => matches!(kind, K::WriteOff | K::Freeze),
            AdjustReason::TheftLoss | AdjustReason::PromotionDonation => kind == K::WriteOff,
            AdjustReason::QcHold => matches!(kind, K::Freeze | K::Unfreeze),
            AdjustReason::Other => true,
        }
    }

    /// The reasons that fit a kind, in list order.
    pub fn for_kind(kind: AdjustKind) -> Vec<AdjustReason> {
        AdjustReason::ALL
            .iter()
            .copied()
            .filter(|r| r.fits(kind))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_has_a_reason_and_other_fits_all() {
        for kind in AdjustKind::ALL {
            let fit = AdjustReason::for_kind(*kind);
            assert!(fit.contains(&AdjustReason::Other), "{kind}");
            assert!(fit.len() >= 2, "{kind}: {fit:?}");
        }
        assert!(!AdjustReason::Damaged.fits(AdjustKind::Receive));
        assert_eq!(AdjustReason::TheftLoss.category(), ReasonGroup::Outbound);
    }
}
