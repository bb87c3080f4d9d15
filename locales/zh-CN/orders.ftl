## 订单：所有占用、单个订单页、释放占用、处理付款异常

orders-intro = 所有占用过商品或卡券的订单：未付款的占用排在前面，最先到期的最前。
order-status = { $status ->
    [RESERVED] 已占用，未付款
    [CONFIRMED] 已付款
    [RELEASED] 已释放
    [EXPIRED] 已超时
   *[other] { $status }
}
orders-status = 状态
orders-order = 订单
orders-order-id = 订单号
orders-lines = 明细
orders-age = 下单
orders-expiry = 占用到期
orders-expiring = 即将到期
orders-payment = 付款
orders-no-payment = 未付款
orders-when = 时间
orders-n = { $n ->
    [0] 没有订单。
   *[other] 共 { $n } 个订单。
}
orders-none-yet = 还没有订单。订单系统通过 API 占用商品后，订单会显示在这里。
orders-none-match = 没有符合筛选条件的订单。
orders-late-payment = 延迟付款
orders-to-settle = 待处理付款
orders-line-codes = { $n ->
    [one] （{ $n } 个卡券）
   *[other] （{ $n } 个卡券）
}
orders-line-in = 在 { $warehouse }
orders-line-hold = { $hold ->
    [checked] 付款时扣减
   *[other] 不计库存
}
orders-exceptions = 待处理付款
orders-exceptions-n = { $n ->
    [one] { $n } 笔待处理付款
   *[other] { $n } 笔待处理付款
}
orders-exceptions-explain = 这些订单在占用结束后才付款，且无法履约。请逐笔退款，或补货后补发。
orders-exception-why = 原因
orders-exception-status = { $status ->
    [EXPIRED] 占用超时后才付款。
    [RELEASED] 订单释放后才付款。
   *[other] 付款时订单状态为 { $status }。
}
orders-shortfall = 需要 { $qty }，现有 { $available }
orders-exception-title = 待处理付款 #{ $id }
orders-resolve-how = 如何处理？
orders-resolve-refunded = 已退款：款项已退还顾客
orders-resolve-fulfilled = 已补发：现在扣减商品（补货之后）
orders-resolve-note = 备注（做了什么）
orders-resolve-do = 处理
orders-resolved-as = { $resolution ->
    [refunded] 已退款
    [fulfilled] 已补发
   *[other] { $resolution }
}
orders-order-title = 订单 { $order }
orders-created = 下单时间
orders-codes-in-state = { $n } 个{ $state ->
    [SOLD] 已售
    [REDEEMED] 已核销
    [VOIDED] 已作废
    [BOOKING] 占用中
   *[other] { $state }
}
orders-bookings = 预约
orders-booking-ref = 预约号
orders-timeline = 时间线
orders-no-timeline = 此订单没有任何记录。
order-event = { $action ->
    [reservation-reserve] 已占用
    [reservation-confirm] 已付款
    [reservation-confirm-late] 延迟付款，已重新扣减
    [reservation-payment-ref] 已记录支付单号
    [reservation-release] 已释放
    [reservation-expire] 占用超时
    [stock-return] 退货
    [exception-record] 付款记为异常
    [exception-resolve] 付款已处理
   *[other] { $action }
}
orders-ledger = 库存变动
orders-no-ledger = 此订单没有库存变动。
orders-move = 变动
orders-qty = 数量
orders-note = 备注
orders-release-title = 释放占用
orders-release-question = 释放订单 { $order } 的占用？
orders-release-explain = 商品重新上架可售，占用的卡券回到卡券池。不会通知订单系统：它下次查询此订单时会得知已释放。
orders-release-reason = 原因
orders-release-reason-example = 例如：顾客电话取消
orders-release-do = 释放占用
orders-release-keep = 保留占用

## 核销台：核销顾客出示的券码

counter-intro = 输入或扫描顾客出示的券码。先查验，确认商品无误后再核销。
counter-code = 券码
counter-check = 查验
counter-product = 商品
counter-redeem = 核销
counter-redeemed-now = 已核销
counter-redeemed-at = 核销时间
