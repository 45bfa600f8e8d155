//! [`owner`]: who owns a name, as a function of state rather than of the order of events.
//!
//! A name has up to three owners: the registry's, the registrar token's holder (names a
//! registrar manages: `x.eth`, `x.base.eth`) and the NameWrapper token's holder (while
//! wrapped). The owner is
//! 1. the NameWrapper token's holder, if the name is wrapped: the registry owner is the
//!    NameWrapper and its token exists;
//! 2. else the registrar token's holder, if the name has a registrar token (expired or not:
//!    the registrant can reclaim the registry record until someone registers it anew);
//! 3. else the registry owner.
//!
//! So a `reclaim` or a registry `setOwner` on `x.eth` does not make its registry owner the
//! owner, and a later token transfer does not undo a wrap.

use entities::domain;

use super::IndexContext;

/// The owner of `domain` (see the module documentation).
pub fn owner(ctx: &IndexContext, domain: &domain::Model) -> Option<domain::RawAddress> {
    let wrapped = ctx.name_wrapper.is_some_and(|wrapper| {
        domain.registry_owner.as_ref().is_some_and(|o| o.as_bytes() == wrapper.as_slice())
    });
    if wrapped && domain.wrapped_owner.is_some() {
        return domain.wrapped_owner.clone();
    }
    if domain.token_owner.is_some() {
        return domain.token_owner.clone();
    }
    domain.registry_owner.clone()
}

/// Sets `domain.owner` from its owners.
pub fn refresh(ctx: &IndexContext, domain: &mut domain::Model) {
    domain.owner = owner(ctx, domain);
}
